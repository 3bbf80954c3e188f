/**
 * How admin API failures leave as gRPC status codes: one mapping from
 * ferry's error codes, applied once at the edge of every call (grpc-service.ts).
 */
import { Metadata, type ServerErrorResponse, status } from '@grpc/grpc-js';
import { FerryError } from '../errors.ts';

/** An error that already knows its gRPC status: thrown by handlers for request checks and item failures. */
export class RpcError extends Error {
  override name = 'RpcError';
  readonly code: status;
  constructor(code: status, message: string) {
    super(message);
    this.code = code;
  }
}

/** A gRPC error as grpc-js sends it: code, details, and empty trailing metadata. */
export interface AdminServiceError extends ServerErrorResponse {
  readonly code: status;
  readonly details: string;
}

function serviceError(code: status, details: string): AdminServiceError {
  const error = new Error(details) as Error & { code: status; details: string; metadata: Metadata };
  error.code = code;
  error.details = details;
  error.metadata = new Metadata();
  return error;
}

function abortKind(signal: AbortSignal | undefined): 'deadline' | 'cancelled' | undefined {
  if (!signal?.aborted) return undefined;
  const reason: unknown = signal.reason;
  if (reason instanceof Error && 'kind' in reason && reason.kind === 'deadline') return 'deadline';
  return 'cancelled';
}

function fromFerryError(error: FerryError, signal: AbortSignal | undefined): AdminServiceError {
  switch (error.code) {
    case 'contract':
      // The contract's text is `${field}: ${rule}`, so the caller learns which field to fix.
      return serviceError(status.INVALID_ARGUMENT, error.message);
    case 'access_denied':
      return serviceError(
        status.PERMISSION_DENIED,
        `gateway refused the account key: ${error.message}`,
      );
    case 'gateway_rejected':
      return serviceError(
        status.FAILED_PRECONDITION,
        `gateway rejected the request: ${error.message}`,
      );
    case 'transport':
      return serviceError(status.UNAVAILABLE, error.message);
    case 'kafka':
      return serviceError(status.UNAVAILABLE, error.message);
    case 'aborted':
      return abortKind(signal) === 'deadline'
        ? serviceError(status.DEADLINE_EXCEEDED, 'the deadline passed before the gateway answered')
        : serviceError(status.CANCELLED, 'the call was cancelled');
    case 'illegal_state':
      return serviceError(status.FAILED_PRECONDITION, error.message);
    default:
      return serviceError(status.INTERNAL, 'internal error');
  }
}

/**
 * Turns anything a handler threw into the error grpc-js sends. Errors of
 * unknown origin become INTERNAL without their message (it may hold secrets).
 * @param signal the call's signal: when its deadline fired, the answer is DEADLINE_EXCEEDED.
 */
export function toServiceError(thrown: unknown, signal?: AbortSignal): AdminServiceError {
  const aborted = abortKind(signal);
  if (aborted === 'deadline') {
    return serviceError(status.DEADLINE_EXCEEDED, 'the deadline passed before the call finished');
  }
  if (thrown instanceof RpcError) return serviceError(thrown.code, thrown.message);
  if (thrown instanceof FerryError) return fromFerryError(thrown, signal);
  if (aborted === 'cancelled') return serviceError(status.CANCELLED, 'the call was cancelled');
  return serviceError(status.INTERNAL, 'internal error');
}
