/**
 * The messages between the main thread and the urgent lane's worker thread. Requests
 * carry an id and are answered once; events (state, logs, a Retry-After hold, a crash)
 * flow from the worker unasked. Errors cross as their message and ferry error code, so
 * the main thread's exit code still names a refused credential or a missing ACL.
 */
import type { Config } from '../config/config.ts';
import { type ErrorCode, FerryError } from '../errors.ts';
import type { DesiredConsumption } from '../pipeline/consumption-mode.ts';
import type { PipelineState } from '../pipeline/pipeline-control.ts';

/** What the worker is started with. */
export interface UrgentLaneWorkerData {
  readonly config: Config;
  /** The main logger's level: the worker's lines go to the main logger's destination. */
  readonly logLevel: string;
}

export type LaneRequest =
  | { readonly op: 'start' }
  | { readonly op: 'stop'; readonly graceMs: number }
  | { readonly op: 'setDesired'; readonly desired: DesiredConsumption }
  | { readonly op: 'metrics' };

/** A request as posted: its id comes back on the answer. */
export type PostedRequest = LaneRequest & { readonly id: number };

/** A request posted without an answer: another thread's Retry-After hold. */
export interface HoldMessage {
  readonly op: 'hold';
  readonly remainingMs: number;
}

export interface SerializedError {
  readonly message: string;
  /** The FerryError code, when it was one. */
  readonly code?: ErrorCode;
}

export type LaneAnswer =
  | { readonly kind: 'answer'; readonly id: number; readonly value: unknown }
  | { readonly kind: 'failed'; readonly id: number; readonly error: SerializedError };

export type LaneEvent =
  | {
      readonly kind: 'state';
      readonly state: PipelineState;
      readonly running: boolean;
      /** Its first assignment's partitions are taken over (Pipeline.takenOver). */
      readonly takenOver: boolean;
      /** The id of the last request the worker took: a state built before a steer is stale. */
      readonly handled: number;
    }
  | { readonly kind: 'log'; readonly line: string }
  | { readonly kind: 'hold'; readonly remainingMs: number }
  | { readonly kind: 'crash'; readonly error: SerializedError };

export type WorkerMessage = LaneAnswer | LaneEvent;

export function serializeError(error: unknown): SerializedError {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof FerryError ? { message, code: error.code } : { message };
}

/** The error again on this side: a FerryError with its code when it was one. */
export function deserializeError(error: SerializedError): Error {
  return error.code === undefined
    ? new Error(error.message)
    : new FerryError(error.code, error.message, { retryable: false });
}
