/**
 * The gRPC service config clients of the admin API should use
 * (proto/ferry/admin/v1/service-config.json, shipped with the proto): retries of the
 * idempotent reads on UNAVAILABLE, so a replica restarting or a connection dropped
 * under a read costs the caller a short delay instead of an error. Calls that change
 * something (pause, replay, template changes, an OTP call, an HLR lookup under a client id)
 * are never retried by the client: it cannot know whether the first attempt ran.
 */
import type { ChannelOptions } from '@grpc/grpc-js';
import serviceConfig from '../../proto/ferry/admin/v1/service-config.json' with { type: 'json' };

/** The service config as the JSON text grpc-js takes. */
export const ADMIN_SERVICE_CONFIG: string = JSON.stringify(serviceConfig);

/** Channel options that apply the service config (retries need grpc-js's default `grpc.enable_retries`). */
export const adminChannelOptions: ChannelOptions = {
  'grpc.service_config': ADMIN_SERVICE_CONFIG,
};
