/**
 * Named scenarios: races docs/chaos.md records, each as a plan aimed at the moment the
 * race needs; the seed still draws everything else. `node test/sim/run.ts --scenarios`
 * runs each over 20 seeds; `--scenario=NAME --seed=N` replays one.
 */
import { type Plan, planRun } from './plan.ts';

export const scenarios: Record<string, (seed: number) => Plan> = {
  /**
   * A member's rejoin answered late: a replica joins while the first one's envelopes
   * queue behind a slow gateway, and the first one's rejoin is answered 0.5–12 s after
   * the group completed (its new partner already runs its share). What that member handed out before the rebalance must not
   * go out once it has joined again: the partitions may be running at their next owner.
   */
  'late-sync-after-rejoin': (seed) => {
    const base = planRun(seed);
    return {
      ...base,
      replicas: 1,
      partitions: 2,
      commands: 300,
      produceWindowMs: 4_000,
      settings: { ...base.settings, concurrency: 1, batchMaxOps: 1 + (seed % 2) },
      gatewayFaults: { ...base.gatewayFaults, maxLatencyMs: 800 },
      portFaults: { ...base.portFaults, lateFetchRate: 0, lateSyncRate: 1 },
      faults: [{ kind: 'join', atMs: 2_500 + (seed % 5) * 200 }],
      healAtMs: 16_000,
    };
  },
  /**
   * Finding 20: every rejoin hands a fetch sent before it over after it, while a replica
   * joins and one is frozen past its session, so partitions move and come back.
   */
  'late-fetch-after-rejoin': (seed) => {
    const base = planRun(seed);
    return {
      ...base,
      replicas: 2,
      partitions: 3,
      commands: 40,
      portFaults: { ...base.portFaults, lateFetchRate: 1, maxBatchRecords: 5 },
      faults: [
        { kind: 'join', atMs: 1_500 },
        { kind: 'freeze', atMs: 4_000, replica: 0, forMs: base.settings.sessionMs + 2_000 },
      ],
      healAtMs: 20_000,
    };
  },
  /**
   * Finding 21: result commits whose answer is lost (before or after EndTxn was logged)
   * while replicas join, so a retry's backoff spans a rebalance.
   */
  'unknown-commit-during-rebalance': (seed) => {
    const base = planRun(seed);
    return {
      ...base,
      replicas: 2,
      partitions: 2,
      commands: 40,
      produceWindowMs: 8_000,
      portFaults: { ...base.portFaults, unknownOutcomeRate: 0.5, lateFetchRate: 0 },
      faults: [700, 1_400, 2_100, 2_800, 3_500, 4_200].map((atMs) => ({
        kind: 'join' as const,
        atMs: atMs + (seed % 7) * 50,
      })),
      healAtMs: 12_000,
    };
  },
  /**
   * The start-up loop of `make chaos` (findings 18 and 19, and the `chaos-short` run of
   * seed 567687039): one replica starts, a second joins 3–7 s in, and the broker
   * restarts 0–1.5 s after that, with transaction markers slow to land.
   */
  'broker-restart-while-joining': (seed) => {
    const base = planRun(seed);
    const joinAtMs = 3_000 + (seed % 5) * 1_000;
    return {
      ...base,
      replicas: 1,
      commands: 50,
      produceWindowMs: 10_000,
      markerDelayMaxMs: 200,
      faults: [
        { kind: 'join', atMs: joinAtMs },
        { kind: 'broker-restart', atMs: joinAtMs + (seed % 4) * 500, downMs: 4_300 },
      ],
      healAtMs: 15_000,
    };
  },
  /**
   * Finding 19: a result commit fails while the broker restarts (its coordinator loading
   * for seconds), the partition's re-read begins a takeover that waits for the id's last
   * transaction, and a replica joins meanwhile, the group leaving the partition here.
   */
  'takeover-spanning-a-rebalance': (seed) => {
    const base = planRun(seed);
    const restartAtMs = 2_000 + (seed % 10) * 150;
    const downMs = 1_000 + (seed % 7) * 300;
    return {
      ...base,
      replicas: 1,
      partitions: 2,
      commands: 60,
      produceWindowMs: 9_000,
      markerDelayMaxMs: 50,
      coordinatorLoadMaxMs: 4_000,
      portFaults: { ...base.portFaults, unknownOutcomeRate: 0.2, lateFetchRate: 0 },
      faults: [
        { kind: 'broker-restart', atMs: restartAtMs, downMs },
        { kind: 'join', atMs: restartAtMs + downMs + (seed % 5) * 400 },
      ],
      healAtMs: 14_000,
    };
  },
};
