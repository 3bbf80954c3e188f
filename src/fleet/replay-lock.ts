/**
 * One dead-letter replay at a time for the whole fleet (README, Fleet control): before
 * a replay runs, its replica writes a claim to the control topic and reads the topic
 * back up to it. Of the claims not lapsed, the one whose first record has the lowest
 * offset holds the replay, so two replicas that start at the same instant agree on
 * one winner; the other answers FAILED_PRECONDITION naming the holder. The holder
 * renews its claim while it runs, writes its progress after every chunk, and deletes
 * the claim at the end. Should it stall past its claim (a frozen process), the
 * replay's transactional id still fences it when the next one begins
 * (src/kafka/dead-letter-reader.ts), so no dead letter is replayed twice.
 */
import { randomUUID } from 'node:crypto';
import type { DeadLetterListing, ListRequest } from '../admin/dead-letter-list.ts';
import type {
  DeadLetterReplayer,
  ReplayOutcome,
  ReplayRequest,
} from '../admin/dead-letter-replay.ts';
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import {
  formatRecord,
  LOCK_PREFIX,
  type LockClaim,
  PROGRESS_KEY,
  type ProgressRecord,
  type ReplayPhase,
} from './control-records.ts';
import type { FleetControl } from './fleet-control.ts';

export interface FleetReplayOptions {
  /** Runs the replay itself once the claim is held. */
  readonly replayer: DeadLetterReplayer;
  readonly fleet: Pick<FleetControl, 'write' | 'view' | 'replicaId'>;
  readonly logger: Logger;
  /** A claim lapses this long after it was written or renewed. Default 30 000 ms. */
  readonly claimTtlMs?: number;
}

export class FleetReplay implements DeadLetterReplayer {
  readonly #options: FleetReplayOptions;
  readonly #log: Logger;

  constructor(options: FleetReplayOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'fleet-replay' });
  }

  /** Listing changes nothing, so it runs beside a replay anywhere in the fleet. */
  list(request: ListRequest): Promise<DeadLetterListing> {
    return this.#options.replayer.list(request);
  }

  get #ttlMs(): number {
    return this.#options.claimTtlMs ?? 30_000;
  }

  /** @throws FerryError `illegal_state` while a replay runs anywhere in the fleet; `kafka`. */
  async replay(request: ReplayRequest): Promise<ReplayOutcome> {
    // A dry run sends nothing and moves no progress: it needs no claim and waits for none.
    if (request.dryRun) return this.#options.replayer.replay(request);
    const { fleet } = this.#options;
    const claimId = randomUUID();
    const key = `${LOCK_PREFIX}${claimId}`;
    const claim = (claimOffset?: number): LockClaim => ({
      claimId,
      owner: fleet.replicaId,
      expiresAtMs: Date.now() + this.#ttlMs,
      ttlMs: this.#ttlMs,
      ...(claimOffset === undefined ? {} : { claimOffset }),
    });
    const claimOffset = await fleet.write(key, formatRecord(claim()));
    const holder = fleet.view.lockHolder(Date.now());
    if (holder?.claimId !== claimId) {
      await fleet.write(key, null).catch(() => undefined);
      const who = holder
        ? `on ${holder.owner} (claimed at offset ${holder.claimOffset}, lapses ${new Date(holder.lapsesAtMs).toISOString()} unless renewed)`
        : 'elsewhere';
      throw new FerryError('illegal_state', `a dead-letter replay is already running ${who}`, {
        retryable: true,
      });
    }

    const lost = new AbortController();
    const renewals = setInterval(
      () => {
        fleet.write(key, formatRecord(claim(claimOffset))).catch((error: unknown) => {
          // Without a renewal the claim lapses and another replica may begin: stop first.
          lost.abort(new FerryError('kafka', `renewing the replay claim failed: ${String(error)}`));
        });
      },
      Math.floor(this.#ttlMs / 3),
    );
    // The call in progress holds the process, not its renewals.
    renewals.unref();
    const startedAtMs = Date.now();
    const progress = (state: ReplayPhase, totals: Partial<ReplayOutcome>, error?: string) => {
      const record: ProgressRecord = {
        owner: fleet.replicaId,
        claimId,
        state,
        replayed: totals.replayed ?? 0,
        scanned: totals.scanned ?? 0,
        skipped: totals.skipped ?? 0,
        alreadyReplayed: totals.alreadyReplayed ?? 0,
        startedAtMs,
        updatedAtMs: Date.now(),
        ...(error === undefined ? {} : { error }),
      };
      return fleet.write(PROGRESS_KEY, formatRecord(record)).catch((failure: unknown) => {
        this.#log.warn({ err: String(failure) }, 'writing the replay progress failed');
        return 0;
      });
    };
    let written: Promise<unknown> = progress('running', {});
    let latest: Partial<ReplayOutcome> = {};
    try {
      const signal = request.signal ? AbortSignal.any([request.signal, lost.signal]) : lost.signal;
      const outcome = await this.#options.replayer.replay({
        ...request,
        signal,
        onChunk: (totals) => {
          request.onChunk?.(totals);
          latest = totals;
          written = written.then(() => progress('running', totals));
        },
      });
      await written;
      await progress('finished', outcome);
      return outcome;
    } catch (error: unknown) {
      await written;
      await progress('failed', latest, error instanceof Error ? error.message : String(error));
      throw error;
    } finally {
      clearInterval(renewals);
      await fleet.write(key, null).catch(() => undefined);
    }
  }
}
