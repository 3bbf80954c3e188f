/**
 * One envelope to the gateway: the request behind both sends and `status` lookups. With
 * tracing on, each command's trace gets the request as a child span (tracing.ts, `http`)
 * that ends with the answer's status code or the error's type; off, this is the bare call.
 */
import { answerIdOf, type Transport } from '../contract/index.ts';
import { FerryError } from '../errors.ts';
import type { Tracer } from '../observability/tracing.ts';
import type { EnvelopeAnswer, GatewayClient } from '../upstream/gateway-client.ts';
import { GatewayStatusError } from '../upstream/gateway-http.ts';
import type { LookupTarget } from './send-outcome.ts';

/** Posts the operations of these commands as one envelope, the attempt-th try of its kind. */
export type PostEnvelope = (
  transport: Transport,
  kind: 'send' | 'lookup',
  targets: readonly LookupTarget[],
  operations: readonly string[],
  attempt: number,
) => Promise<EnvelopeAnswer>;

/**
 * Envelopes through `gateway`, traced by `tracer` when tracing is on; `signal` cancels the
 * requests in flight when ferry stops.
 */
export function envelopePoster(
  gateway: GatewayClient,
  tracer: Tracer | undefined,
  signal: AbortSignal,
): PostEnvelope {
  return async (transport, kind, targets, operations, attempt) => {
    // A created template comes back under the gateway's own id: its answer is matched by
    // position only. A lookup's `status` operations are answered under the id they ask for.
    const ids = targets.map((target) =>
      kind === 'send' ? answerIdOf(target.type, target.id) : target.id,
    );
    if (!tracer) return gateway.sendEnvelope(transport, operations, ids, signal);
    const call = tracer.http(
      targets.map((target) => target.span),
      {
        url: gateway.urlOf(transport) ?? '',
        transport,
        kind,
        operations: operations.length,
        attempt,
      },
    );
    try {
      const answer = await gateway.sendEnvelope(transport, operations, ids, signal);
      call.end({ statusCode: 200 });
      return answer;
    } catch (error: unknown) {
      call.end(
        error instanceof GatewayStatusError
          ? { statusCode: error.statusCode }
          : { errorType: error instanceof FerryError ? error.code : 'internal' },
      );
      throw error;
    }
  };
}
