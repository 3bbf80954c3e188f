/**
 * A real three-node Apache Kafka cluster (KRaft) from the same Maven jars as the
 * single broker: every node is broker and controller in one JVM, the three form the
 * controller quorum, and topics are replicated three times with two in sync required.
 * Nodes can be killed with SIGKILL and started again on the same folder and ports,
 * which is how the chaos run and the replication test move partition leaders.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import {
  brokerPorts,
  ensureKafkaJars,
  KafkaBrokerError,
  newClusterId,
  type RunningBroker,
  startBroker,
} from './broker.ts';

export interface ClusterOptions {
  /** Folder for the nodes' config, data and logs (`node-<id>/`); created when missing. */
  readonly dir: string;
  /** Nodes in the cluster; every one is a controller voter. Default 3. */
  readonly nodes?: number;
  /** JVM heap of each node. Default 384. */
  readonly heapMb?: number;
  /** How long a node may take to answer metadata after it started. Default 120 000 ms. */
  readonly readyTimeoutMs?: number;
}

/** Where one node listens; its id is its KRaft `node.id`. */
export interface ClusterNode {
  readonly id: number;
  readonly port: number;
  readonly controllerPort: number;
  readonly address: string;
  readonly dir: string;
}

/** Partitions of `__consumer_offsets` and `__transaction_state` (few: the cluster is small). */
const INTERNAL_TOPIC_PARTITIONS = 6;

function nodeProperties(node: ClusterNode, voters: string, replicas: number): string {
  const minInSync = Math.min(2, replicas);
  return `process.roles=broker,controller
node.id=${node.id}
controller.quorum.voters=${voters}
listeners=PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}
advertised.listeners=PLAINTEXT://127.0.0.1:${node.port}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=${join(node.dir, 'data')}
num.partitions=1
default.replication.factor=${replicas}
min.insync.replicas=${minInSync}
unclean.leader.election.enable=false
offsets.topic.replication.factor=${replicas}
offsets.topic.num.partitions=${INTERNAL_TOPIC_PARTITIONS}
transaction.state.log.replication.factor=${replicas}
transaction.state.log.min.isr=${minInSync}
transaction.state.log.num.partitions=${INTERNAL_TOPIC_PARTITIONS}
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
num.network.threads=2
num.io.threads=2
background.threads=2
`;
}

function kafka(brokers: string, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    retry: { initialRetryTime: 200, retries: 5 },
  });
}

/** Java's String.hashCode, which Kafka uses to place a group or transactional id. */
function javaHashCode(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i += 1) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/**
 * The `__consumer_offsets` / `__transaction_state` partition Kafka keeps `key` in:
 * `Utils.abs(key.hashCode()) % partitions`, where Kafka's abs maps Integer.MIN_VALUE to 0.
 */
export function coordinatorPartition(key: string, partitions = INTERNAL_TOPIC_PARTITIONS): number {
  const hash = javaHashCode(key);
  return (hash === -2147483648 ? 0 : Math.abs(hash)) % partitions;
}

export class KafkaCluster {
  readonly nodes: readonly ClusterNode[];
  /** Every node's address, comma-separated (a client's bootstrap list). */
  readonly brokers: string;
  readonly #options: ClusterOptions;
  readonly #clusterId = newClusterId();
  readonly #voters: string;
  readonly #running = new Map<number, RunningBroker>();

  private constructor(options: ClusterOptions, nodes: readonly ClusterNode[]) {
    this.#options = options;
    this.nodes = nodes;
    this.brokers = nodes.map((n) => n.address).join(',');
    this.#voters = nodes.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');
  }

  /**
   * Formats and starts every node at once (one alone cannot elect a controller), and
   * resolves once the cluster reports all of them. On a failure the started nodes are
   * stopped before it throws. @throws KafkaBrokerError
   */
  static async start(options: ClusterOptions): Promise<KafkaCluster> {
    await ensureKafkaJars();
    const count = options.nodes ?? 3;
    const nodes: ClusterNode[] = [];
    for (let id = 1; id <= count; id += 1) {
      const { port, controllerPort } = await brokerPorts();
      nodes.push({
        id,
        port,
        controllerPort,
        address: `127.0.0.1:${port}`,
        dir: join(options.dir, `node-${id}`),
      });
    }
    const cluster = new KafkaCluster(options, nodes);
    try {
      const started = await Promise.allSettled(nodes.map((node) => cluster.startNode(node.id)));
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
      await cluster.waitForBrokers(count, options.readyTimeoutMs ?? 120_000);
    } catch (error: unknown) {
      await cluster.stop(5_000);
      throw error;
    }
    return cluster;
  }

  #node(id: number): ClusterNode {
    const node = this.nodes.find((n) => n.id === id);
    if (!node) throw new KafkaBrokerError(`no node ${id} in the cluster`);
    return node;
  }

  /** Process ids of the nodes running now (for a last-resort kill on exit). */
  pids(): number[] {
    return [...this.#running.values()].map((b) => b.pid);
  }

  isRunning(id: number): boolean {
    return this.#running.has(id);
  }

  /** Starts a node, first time or again on its own folder and ports; resolves once it answers metadata. */
  async startNode(id: number): Promise<void> {
    if (this.#running.has(id)) return;
    const node = this.#node(id);
    await mkdir(node.dir, { recursive: true });
    const broker = await startBroker({
      dir: node.dir,
      port: node.port,
      controllerPort: node.controllerPort,
      heapMb: this.#options.heapMb ?? 384,
      readyTimeoutMs: this.#options.readyTimeoutMs ?? 120_000,
      clusterId: this.#clusterId,
      serverProperties: nodeProperties(node, this.#voters, this.nodes.length),
    });
    this.#running.set(id, broker);
  }

  /** `kill -9` of one node: no shutdown, no leader hand-over; resolves once the process is gone. */
  async kill9(id: number): Promise<void> {
    const broker = this.#running.get(id);
    if (!broker) return;
    this.#running.delete(id);
    try {
      process.kill(broker.pid, 'SIGKILL');
    } catch {
      return; // already gone
    }
    // stopPid sends SIGTERM first; to a killed process that is a no-op once it is gone.
    await broker.stop(0);
  }

  /** The leader's node id of each partition of `topic` (-1 while it has none). */
  async partitionLeaders(topic: string): Promise<Map<number, number>> {
    const partitions = await this.#metadata(topic);
    return new Map(partitions.map((p) => [p.partitionId, p.leader]));
  }

  /** How many replicas each partition of `topic` has (its replication factor). */
  async replicaCounts(topic: string): Promise<number[]> {
    return (await this.#metadata(topic)).map((p) => p.replicas.length);
  }

  /** The node leading the `__consumer_offsets` partition of `groupId`: its group coordinator. */
  async groupCoordinator(groupId: string): Promise<number> {
    const leaders = await this.partitionLeaders('__consumer_offsets');
    return leaders.get(coordinatorPartition(groupId)) ?? -1;
  }

  /** The node leading the `__transaction_state` partition of `transactionalId`. */
  async transactionCoordinator(transactionalId: string): Promise<number> {
    const leaders = await this.partitionLeaders('__transaction_state');
    return leaders.get(coordinatorPartition(transactionalId)) ?? -1;
  }

  async #metadata(topic: string) {
    const admin = kafka(this.#liveBrokers(), 'ferry-cluster-metadata').admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      return topics[0]?.partitions ?? [];
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  /**
   * Waits until every partition of `topics` has all its replicas in sync again (a
   * restarted node caught up), so a next fault does not drop a partition below
   * min.insync.replicas. @throws KafkaBrokerError after `timeoutMs`.
   */
  async waitForFullIsr(topics: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let behind = 'no answer';
    while (Date.now() < deadline) {
      try {
        const lagging: string[] = [];
        for (const topic of topics) {
          for (const p of await this.#metadata(topic)) {
            if (p.isr.length < p.replicas.length || p.leader < 0)
              lagging.push(`${topic}[${p.partitionId}] isr ${p.isr.join(',')}`);
          }
        }
        if (lagging.length === 0) return;
        behind = lagging.slice(0, 5).join('; ');
      } catch (error: unknown) {
        behind = String(error);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new KafkaBrokerError(`replicas not back in sync after ${timeoutMs} ms: ${behind}`);
  }

  /** Resolves once a metadata answer lists `count` live brokers. @throws KafkaBrokerError */
  async waitForBrokers(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let seen = 0;
    while (Date.now() < deadline) {
      const admin = kafka(this.#liveBrokers(), 'ferry-cluster-probe').admin();
      try {
        await admin.connect();
        seen = (await admin.describeCluster()).brokers.length;
        if (seen >= count) return;
      } catch {
        // not yet
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    throw new KafkaBrokerError(
      `the cluster showed ${seen} of ${count} brokers after ${timeoutMs} ms`,
    );
  }

  /** Addresses of the running nodes: asking a killed one would only wait for its timeout. */
  #liveBrokers(): string {
    const live = this.nodes.filter((n) => this.#running.has(n.id)).map((n) => n.address);
    return (live.length > 0 ? live : this.nodes.map((n) => n.address)).join(',');
  }

  /** SIGTERM to every node at once, SIGKILL after `graceMs`; resolves once all are gone. */
  async stop(graceMs = 15_000): Promise<void> {
    const running = [...this.#running.values()];
    this.#running.clear();
    await Promise.all(running.map((b) => b.stop(graceMs).catch(() => undefined)));
  }
}
