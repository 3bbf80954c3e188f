/**
 * One simulated run of a plan: a broker, a group coordinator and a gateway in memory,
 * replicas of the real pipeline started, stopped, frozen and killed at the plan's
 * moments, commands written while it goes on; then faults stop, the run must finish
 * (every partition committed to its end), the replicas stop, and the oracle checks
 * what was committed and what the gateway carried out. Everything runs in virtual time
 * from the seed: the same plan gives the same run.
 */

import type { LogLevel } from '../../src/observability/logger.ts';
import type { FerryMetrics } from '../../src/observability/metrics.ts';
import { checkRun, missingFinals } from './oracle.ts';
import type { Fault, Plan } from './plan.ts';
import { SimBroker } from './sim-broker.ts';
import { SimCallbacks } from './sim-callbacks.ts';
import { SimGateway } from './sim-gateway.ts';
import { SimGroup } from './sim-group.ts';
import type { PortFaults } from './sim-kafka-port.ts';
import { SimRandom } from './sim-random.ts';
import {
  DEDUPE_TOPIC,
  FINAL_TOPIC,
  type ReplicaWorld,
  SimReplica,
  TOPICS,
  TRACKING_TOPIC,
} from './sim-replica.ts';
import { VirtualClock } from './virtual-clock.ts';

export interface RunOutcome {
  readonly seed: number;
  readonly violations: readonly string[];
  /** Virtual ms from the start until every partition was committed to its end. */
  readonly finishedAtMs: number | undefined;
  readonly replicaStarts: number;
  readonly gatewayRequests: number;
  readonly rebalances: number;
}

export interface RunOptions {
  readonly metrics: FerryMetrics;
  readonly logLevel: LogLevel;
  readonly log: (line: string) => void;
}

/** After the faults end, the run must finish within this much virtual time. */
const FINISH_WITHIN_MS = 300_000;
const PHONE = 79_001_234_567;

export async function runPlan(plan: Plan, options: RunOptions): Promise<RunOutcome> {
  const random = new SimRandom(plan.seed ^ 0x5eed5eed);
  const clock = VirtualClock.install(random.fork());
  try {
    return await simulate(plan, options, random, clock);
  } finally {
    clock.uninstall();
  }
}

async function simulate(
  plan: Plan,
  options: RunOptions,
  random: SimRandom,
  clock: VirtualClock,
): Promise<RunOutcome> {
  const broker = new SimBroker(random.fork(), plan.partitions, {
    markerDelayMaxMs: plan.markerDelayMaxMs,
    coordinatorLoadMaxMs: plan.coordinatorLoadMaxMs,
  });
  const group = new SimGroup(broker, plan.settings.sessionMs);
  const gateway = new SimGateway(random.fork(), plan.settings.requestTimeoutMs, plan.gatewayFaults);
  const faults: { -readonly [K in keyof PortFaults]: PortFaults[K] } = { ...plan.portFaults };
  const world: ReplicaWorld = {
    broker,
    group,
    gateway,
    faults,
    metrics: options.metrics,
    logLevel: options.logLevel,
    log: options.log,
    dedupe: plan.dedupe
      ? { topic: DEDUPE_TOPIC, windowMs: 86_400_000, maxIds: 100_000 }
      : undefined,
    tracking: plan.tracking
      ? {
          topic: TRACKING_TOPIC,
          finalTopic: FINAL_TOPIC,
          followMs: plan.tracking.followMs,
          pollAfterMs: plan.tracking.pollAfterMs,
          // Past the run's end: a give-up is a message the gateway knew and ferry lost.
          giveUpAfterMs: 3_600_000,
          orphanAfterMs: plan.tracking.pollAfterMs,
          notFinal: new Set(['SENT']),
          maxPending: 1_000_000,
        }
      : undefined,
  };
  const callbacks = plan.tracking
    ? new SimCallbacks(broker, gateway, random.fork(), TRACKING_TOPIC, plan.tracking.callbacks)
    : undefined;
  callbacks?.start();
  const slots: SimReplica[] = [];
  let starts = 0;
  const spawn = (slot: number) => {
    starts += 1;
    const replica = new SimReplica(`r${starts}`, world, plan.settings, random.fork());
    slots[slot] = replica;
    options.log(JSON.stringify({ sim: 'start', replica: replica.name, atMs: clock.elapsedMs }));
    replica.start().catch((error: unknown) => {
      replica.crashed = error instanceof Error ? error : new Error(String(error));
    });
  };
  for (let i = 0; i < plan.replicas; i++) setTimeout(() => spawn(i), random.int(0, 2_000));

  const commands: { key: string; id: number; valid: boolean }[] = [];
  let records = 0;
  for (let i = 0; i < plan.commands; i++) {
    const id = 1_000 + i;
    const key = `c${i}`;
    const valid = !random.chance(plan.invalidRate);
    const partition = random.int(0, plan.partitions - 1);
    const command = valid
      ? { type: 'sms', id, phone: PHONE, sms_message: `sim ${id}`, sms_signature: 'FERRY' }
      : { type: 'sms', id, sms_message: `sim ${id}`, sms_signature: 'FERRY' };
    // A producer that writes a record again (an outbox relay, a retried produce) writes
    // the same key and id, so the copy lands on the same partition.
    const copies = plan.copyRate > 0 && random.chance(plan.copyRate) ? random.int(2, 3) : 1;
    records += copies;
    for (let copy = 0; copy < copies; copy++) {
      setTimeout(
        () => {
          broker.append(partition, {
            key,
            value: JSON.stringify(command),
            timestampMs: Date.now(),
          });
          const offset = Number(broker.endOffset(partition) - 1n);
          if (plan.transactionalProducer) broker.appendMarker(partition);
          options.log(
            JSON.stringify({ sim: 'write', key, partition, offset, valid, atMs: clock.elapsedMs }),
          );
          commands.push({ key, id, valid });
          callbacks?.commandWritten(id, partition);
        },
        random.int(0, plan.produceWindowMs),
      );
    }
  }

  const inject = (fault: Fault) => {
    options.log(JSON.stringify({ sim: 'fault', ...fault, atMs: clock.elapsedMs }));
    if (fault.kind === 'broker-restart') {
      broker.goDown();
      setTimeout(() => broker.comeUp(), fault.downMs);
    } else if (fault.kind === 'join') spawn(slots.length);
    else {
      const replica = slots[fault.replica];
      if (!replica?.alive) return;
      if (fault.kind === 'freeze') {
        replica.link.freeze();
        setTimeout(() => replica.link.thaw(), fault.forMs);
      } else {
        if (fault.kind === 'kill') replica.kill();
        else void replica.stop(random.int(0, 3_000));
        setTimeout(() => {
          if (clock.elapsedMs < plan.healAtMs) spawn(fault.replica);
        }, fault.restartAfterMs);
      }
    }
  };
  for (const fault of plan.faults) setTimeout(() => inject(fault), fault.atMs);

  let healed = false;
  setTimeout(() => {
    healed = true;
    options.log(JSON.stringify({ sim: 'heal', atMs: clock.elapsedMs }));
    gateway.faults = {
      ...gateway.faults,
      refusedRate: 0,
      http503Rate: 0,
      lostAnswerRate: 0,
      lateAnswerRate: 0,
    };
    faults.unknownOutcomeRate = 0;
    faults.lateFetchRate = 0;
    faults.lateSyncRate = 0;
    broker.comeUp();
    for (const replica of slots) replica?.link.thaw();
    if (!slots.some((replica) => replica?.alive)) spawn(slots.length);
  }, plan.healAtMs);

  const unfinished = (): string[] => {
    const out: string[] = [];
    for (let p = 0; p < plan.partitions; p++) {
      const end = broker.recordsEnd(p);
      const committed = BigInt(broker.committed(p)?.offset ?? 0);
      if (committed < end) out.push(`${p} (group offset ${committed}, records end ${end})`);
    }
    return out;
  };
  // With tracking, a run is finished once every message sent also has its final event.
  const finalized = () => !plan.tracking || missingFinals(broker.visible).length === 0;
  // Every transaction EndTxn logged has its markers too: a group offset can reach the end
  // through one producer's transaction while another's, logged earlier and carrying the
  // results, still waits for its markers (a lane's commit, then its partition's intent
  // cleared through the partition's own id at a drained stop).
  const finished = () =>
    healed &&
    commands.length === records &&
    unfinished().length === 0 &&
    finalized() &&
    broker.quiescent();
  await clock.runUntil(finished, plan.healAtMs + FINISH_WITHIN_MS);
  const finishedAtMs = finished() ? clock.elapsedMs : undefined;
  const alive = slots.filter((replica) => replica?.alive);
  const stops = alive.map((replica) => replica.stop(5_000));
  let stopped = 0;
  for (const stop of stops) void stop.then(() => (stopped += 1));
  await clock.runUntil(() => stopped === stops.length, 60_000);
  group.stop();
  callbacks?.stop();
  const violations = checkRun({
    commands,
    visible: broker.visible,
    resultsTopic: TOPICS.results,
    sendsById: gateway.gateway.ledger.sendsById(),
    dedupe: plan.dedupe,
    unfinished: finishedAtMs === undefined ? unfinished() : [],
    ...(plan.tracking ? { finalTopic: FINAL_TOPIC } : {}),
  });
  if (stopped !== stops.length) violations.push('a replica did not stop within 60 s');
  for (const replica of slots) {
    if (replica?.crashed)
      violations.push(`replica ${replica.name} crashed: ${replica.crashed.message}`);
  }
  return {
    seed: plan.seed,
    violations,
    finishedAtMs,
    replicaStarts: starts,
    gatewayRequests: gateway.requests,
    rebalances: group.history.length,
  };
}
