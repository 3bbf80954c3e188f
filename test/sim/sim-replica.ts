/**
 * One simulated ferry process: the real Pipeline, wired to the simulated Kafka and
 * gateway through its link. Started, stopped (SIGTERM: a graceful stop), frozen
 * (SIGSTOP) and killed (kill -9) by the run.
 */

import { Writable } from 'node:stream';
import { createLogger, type LogLevel } from '../../src/observability/logger.ts';
import type { FerryMetrics } from '../../src/observability/metrics.ts';
import type { DedupeSettings } from '../../src/pipeline/dedupe.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import type { TrackingSettings } from '../../src/tracking/status-tracker.ts';
import { GatewayClient } from '../../src/upstream/gateway-client.ts';
import { ReplicaLink } from './replica-link.ts';
import type { SimBroker } from './sim-broker.ts';
import { SIM_API_KEY, type SimGateway } from './sim-gateway.ts';
import type { SimGroup } from './sim-group.ts';
import { type PortFaults, SimKafkaPort } from './sim-kafka-port.ts';
import type { SimRandom } from './sim-random.ts';

export interface ReplicaSettings {
  readonly sessionMs: number;
  readonly requestTimeoutMs: number;
  readonly batchMaxOps: number;
  readonly lingerMs: number;
  readonly concurrency: number;
  readonly commitGapMs: number;
  readonly maxCommandsInFlight: number;
  /** FERRY_TRANSACTIONS; not drawn by the plan (`--transactions=lane` of run.ts sets it). */
  readonly transactions?: 'partition' | 'lane' | undefined;
}

export interface ReplicaWorld {
  readonly broker: SimBroker;
  readonly group: SimGroup;
  readonly gateway: SimGateway;
  readonly faults: PortFaults;
  readonly metrics: FerryMetrics;
  readonly logLevel: LogLevel;
  /** Duplicate suppression's settings, when the plan has it on. */
  readonly dedupe: DedupeSettings | undefined;
  /** Final status tracking's settings, when the plan has it on. */
  readonly tracking: TrackingSettings | undefined;
  /** Where the replicas' log lines go (one JSON object per line). */
  readonly log: (line: string) => void;
}

/** Virtual runs start here (see virtual-clock.ts). */
const START_MS = Date.UTC(2026, 0, 1);

export const TOPICS = { commands: 'commands', results: 'results', dlq: 'dead-letters' } as const;
export const DEDUPE_TOPIC = 'dedupe';
export const TRACKING_TOPIC = 'tracking';
export const FINAL_TOPIC = 'final-status';

export class SimReplica {
  readonly name: string;
  readonly link: ReplicaLink;
  readonly pipeline: Pipeline;
  crashed: Error | undefined;
  #stopping: Promise<boolean> | undefined;

  constructor(name: string, world: ReplicaWorld, settings: ReplicaSettings, random: SimRandom) {
    this.name = name;
    this.link = new ReplicaLink(name);
    const sink = new Writable({
      write(chunk, _encoding, done) {
        world.log(String(chunk).trimEnd());
        done();
      },
    });
    const logger = createLogger({
      level: world.logLevel,
      destination: sink,
      base: { replica: name },
    });
    const s = settings;
    this.pipeline = new Pipeline({
      kafka: new SimKafkaPort(this.link, world.broker, world.group, random, world.faults, (event) =>
        world.log(JSON.stringify({ ...event, atMs: Date.now() - START_MS })),
      ),
      gateway: new GatewayClient({ http: world.gateway.transport(this.link), apiKey: SIM_API_KEY }),
      logger,
      metrics: world.metrics,
      groupId: 'ferry-sim',
      topics: TOPICS,
      dedupe: world.dedupe,
      tracking: world.tracking,
      defaultTransport: 'sync',
      transactionalIdPrefix: 'ferry-sim',
      transactions: s.transactions,
      batchMaxOps: s.batchMaxOps,
      lingerMs: s.lingerMs,
      commitGapMs: s.commitGapMs,
      concurrency: s.concurrency,
      rateLimitRps: 0,
      maxAttempts: 3,
      retryBaseMs: 50,
      retryMaxMs: 500,
      retryAfterMaxMs: 1_000,
      inDoubtSettleMs: s.requestTimeoutMs + 2_000,
      leaseMs: Math.floor(s.sessionMs / 2),
      lookupDelayMs: s.requestTimeoutMs,
      fencedHoldMs: s.sessionMs,
      accessDeniedRetryMs: 0,
      sessionTimeoutMs: s.sessionMs,
      maxCommandsInFlight: s.maxCommandsInFlight,
      commandMaxBytes: 1024 * 1024,
      commandMaxDepth: 32,
      recordMaxBytes: 1024 * 1024,
      stallAfterMs: 600_000,
      onCrash: (error) => {
        this.crashed = error;
      },
    });
  }

  get alive(): boolean {
    return this.link.health !== 'dead' && this.#stopping === undefined;
  }

  async start(): Promise<void> {
    await this.pipeline.start();
  }

  /** SIGTERM: a graceful stop within `graceMs`. */
  stop(graceMs: number): Promise<boolean> {
    this.#stopping ??= this.pipeline.stop(graceMs);
    return this.#stopping;
  }

  get stopped(): boolean {
    return this.#stopping !== undefined;
  }

  kill(): void {
    this.link.kill();
  }
}
