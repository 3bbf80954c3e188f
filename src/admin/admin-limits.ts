/**
 * The bounds of the admin API's gRPC server: a client, buggy or hostile, must not
 * hold memory, streams or connections of a process whose job is the pipeline.
 * The values a user may want to change come from the configuration; the timing ones
 * are fixed here, where their reasons are.
 */
import type { ServerOptions } from '@grpc/grpc-js';

export interface AdminLimits {
  /** FERRY_GRPC_MAX_RECEIVE_BYTES: largest request message; beyond it RESOURCE_EXHAUSTED. */
  readonly maxReceiveBytes: number;
  /** FERRY_GRPC_MAX_CONCURRENT_STREAMS: calls at once on one connection (HTTP/2 SETTINGS). */
  readonly maxConcurrentStreams: number;
  /** FERRY_GRPC_MAX_HEALTH_WATCHES: open `Health.Watch` streams at once, server-wide. */
  readonly maxHealthWatches: number;
}

export const defaultAdminLimits: AdminLimits = {
  // Admin requests are a few hundred bytes; gRPC's own default (4 MiB) is far more than needed.
  maxReceiveBytes: 1024 * 1024,
  maxConcurrentStreams: 100,
  // One per probing kubelet or monitor is plenty; each holds a timer until it ends.
  maxHealthWatches: 100,
};

/**
 * Largest response: a ListDeadLetters page of 1,000 dead letters with their commands,
 * or a dry run of a whole replay chunk, each command at most FERRY_COMMAND_MAX_BYTES
 * in the usual case. Past it the call fails with RESOURCE_EXHAUSTED rather than
 * building an unbounded answer.
 */
export const MAX_SEND_BYTES = 64 * 1024 * 1024;

/** The server pings a connection silent for this long, to find dead peers (NAT, crashed clients). */
export const KEEPALIVE_TIME_MS = 60_000;
/** A ping unanswered for this long closes the connection. */
export const KEEPALIVE_TIMEOUT_MS = 20_000;
/** A connection with no call for this long is closed (GOAWAY); clients reconnect on their next call. */
export const MAX_CONNECTION_IDLE_MS = 5 * 60_000;

/** The grpc-js server options for `limits`. */
export function grpcServerOptions(limits: AdminLimits): ServerOptions {
  return {
    'grpc.max_receive_message_length': limits.maxReceiveBytes,
    'grpc.max_send_message_length': MAX_SEND_BYTES,
    'grpc.max_concurrent_streams': limits.maxConcurrentStreams,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    'grpc.max_connection_idle_ms': MAX_CONNECTION_IDLE_MS,
  };
}
