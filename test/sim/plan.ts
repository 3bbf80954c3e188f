/**
 * What one simulated run does, drawn from its seed: the cluster's shape, the settings
 * of the replicas, the commands, and the faults with their moments. A scenario (a known
 * race) fixes some of it; the rest still comes from the seed.
 */
import type { CallbackFaults } from './sim-callbacks.ts';
import type { GatewayFaults } from './sim-gateway.ts';
import type { PortFaults } from './sim-kafka-port.ts';
import { SimRandom } from './sim-random.ts';
import type { ReplicaSettings } from './sim-replica.ts';

export type Fault =
  | { readonly kind: 'broker-restart'; readonly atMs: number; readonly downMs: number }
  | {
      readonly kind: 'kill';
      readonly atMs: number;
      readonly replica: number;
      readonly restartAfterMs: number;
    }
  | {
      readonly kind: 'freeze';
      readonly atMs: number;
      readonly replica: number;
      readonly forMs: number;
    }
  | {
      readonly kind: 'stop';
      readonly atMs: number;
      readonly replica: number;
      readonly restartAfterMs: number;
    }
  | { readonly kind: 'join'; readonly atMs: number };

export interface Plan {
  readonly seed: number;
  readonly partitions: number;
  readonly replicas: number;
  readonly commands: number;
  /** Commands are written at random moments within this many ms. */
  readonly produceWindowMs: number;
  /** Commands are written in transactions: a marker follows each (an offset with no record). */
  readonly transactionalProducer: boolean;
  /** Share of commands that break the contract (never sent). */
  readonly invalidRate: number;
  readonly settings: ReplicaSettings;
  readonly gatewayFaults: GatewayFaults;
  readonly portFaults: PortFaults;
  readonly markerDelayMaxMs: number;
  /** Longest load of a restarted broker's transaction coordinator, ms. */
  readonly coordinatorLoadMaxMs: number;
  readonly faults: readonly Fault[];
  /** Faults and fault rates end here; then the run must finish. */
  readonly healAtMs: number;
  /** Share of commands written two or three times (same key, same id, same partition). */
  readonly copyRate: number;
  /** Duplicate suppression on (FERRY_DEDUPE): each id is then carried out once at most. */
  readonly dedupe: boolean;
  /** Final status tracking on (FERRY_STATUS_TRACKING), with its callbacks' faults; absent: off. */
  readonly tracking?: TrackingPlan | undefined;
}

export interface TrackingPlan {
  readonly pollAfterMs: number;
  readonly followMs: number;
  readonly callbacks: CallbackFaults;
}

export function planRun(seed: number, overrides: Partial<Plan> = {}): Plan {
  const r = new SimRandom(seed);
  const partitions = r.int(1, 4);
  const replicas = r.int(1, 3);
  const sessionMs = r.pick([6_000, 10_000]);
  const requestTimeoutMs = r.pick([1_000, 2_000, 4_000]);
  const healAtMs = r.int(8_000, 25_000);
  const faultCount = r.int(0, 5);
  const faults: Fault[] = [];
  for (let i = 0; i < faultCount; i++) {
    const atMs = r.int(200, healAtMs - 200);
    const replica = r.int(0, replicas - 1);
    const kind = r.pick(['broker-restart', 'kill', 'freeze', 'stop', 'join', 'freeze', 'kill']);
    if (kind === 'broker-restart') faults.push({ kind, atMs, downMs: r.int(100, 8_000) });
    else if (kind === 'kill' || kind === 'stop') {
      faults.push({ kind, atMs, replica, restartAfterMs: r.int(0, 10_000) });
    } else if (kind === 'freeze')
      faults.push({ kind, atMs, replica, forMs: r.int(500, 2 * sessionMs) });
    else faults.push({ kind: 'join', atMs });
  }
  const faulty = r.chance(0.7);
  return {
    seed,
    partitions,
    replicas,
    commands: r.int(5, 60),
    produceWindowMs: r.int(0, healAtMs),
    invalidRate: r.pick([0, 0.05, 0.2]),
    transactionalProducer: r.chance(0.3),
    settings: {
      sessionMs,
      requestTimeoutMs,
      batchMaxOps: r.int(1, 20),
      lingerMs: r.int(0, 30),
      concurrency: r.int(1, 4),
      commitGapMs: r.int(0, 20),
      maxCommandsInFlight: r.pick([10, 100, 1_000]),
    },
    gatewayFaults: {
      refusedRate: faulty ? r.pick([0, 0.02, 0.1]) : 0,
      http503Rate: faulty ? r.pick([0, 0.02, 0.1]) : 0,
      lostAnswerRate: faulty ? r.pick([0, 0.02, 0.1]) : 0,
      lateAnswerRate: faulty ? r.pick([0, 0.02, 0.1]) : 0,
      maxLatencyMs: r.pick([5, 50, 500]),
    },
    portFaults: {
      unknownOutcomeRate: faulty ? r.pick([0, 0.05, 0.2]) : 0,
      lateFetchRate: faulty ? r.pick([0, 0.1, 0.5]) : 0,
      maxBatchRecords: r.pick([1, 5, 20]),
    },
    markerDelayMaxMs: r.pick([0, 20, 200]),
    coordinatorLoadMaxMs: r.pick([0, 500, 3_000]),
    faults: faults.sort((a, b) => a.atMs - b.atMs),
    healAtMs,
    copyRate: r.pick([0, 0.1, 0.3]),
    dedupe: r.chance(0.8),
    // Drawn last, so every other choice of a seed is what it was before tracking existed.
    tracking: r.chance(0.5)
      ? {
          pollAfterMs: r.pick([1_000, 3_000]),
          followMs: r.pick([100, 500]),
          callbacks: {
            dropRate: r.pick([0, 0.3, 1]),
            duplicateRate: r.pick([0, 0.3]),
            maxDelayMs: r.pick([0, 500, 4_000]),
          },
        }
      : undefined,
    ...overrides,
  };
}
