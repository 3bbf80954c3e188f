import {
  type AsyncResponse,
  answerIdOf,
  encodeEnvelope,
  type ItemOutcome,
  readAsyncResponse,
  readSyncResponse,
  type SyncResponse,
  type Transport,
  validateOperation,
} from '../contract/index.ts';
import { FerryError } from '../errors.ts';
import type { GatewayHttp } from './gateway-http.ts';

/** What one envelope came back as, after the contract module read it. */
export type EnvelopeAnswer = SyncResponse | AsyncResponse;

/** Outcome labels for metrics: bounded. */
export type RequestOutcome = 'ok' | 'rejected' | 'access_denied' | 'transport_error';

/** Sees every gateway request once, for metrics. */
export type GatewayRequestObserver = (
  transport: Transport,
  outcome: RequestOutcome,
  durationSeconds: number,
) => void;

/** What the client needs of the HTTP layer: GatewayHttp, or the simulator's gateway. */
export type GatewayTransport = Pick<GatewayHttp, 'supports' | 'urlOf' | 'post'>;

export interface GatewayClientOptions {
  readonly http: GatewayTransport;
  /** The account key sent as `auth` (spec: Authentication). Never logged. */
  readonly apiKey: string;
  readonly onRequest?: GatewayRequestObserver;
}

function outcomeOf(answer: EnvelopeAnswer): RequestOutcome {
  if (answer.kind !== 'rejected') return 'ok';
  return answer.accessDenied ? 'access_denied' : 'rejected';
}

/**
 * The gateway as ferry uses it: envelopes in, answers read by the contract module out.
 * One instance per process; it owns no connections (GatewayHttp does).
 */
export class GatewayClient {
  readonly #http: GatewayTransport;
  readonly #apiKey: string;
  readonly #onRequest: GatewayRequestObserver;

  constructor(options: GatewayClientOptions) {
    this.#http = options.http;
    this.#apiKey = options.apiKey;
    this.#onRequest = options.onRequest ?? (() => undefined);
  }

  supports(transport: Transport): boolean {
    return this.#http.supports(transport);
  }

  /** The URL a transport's envelopes are posted to (for traces); undefined when not configured. */
  urlOf(transport: Transport): string | undefined {
    return this.#http.urlOf(transport);
  }

  /**
   * Sends one envelope of already-serialized operations.
   * @param operationIds the `id` of each operation, to check the items against (sync only).
   * @throws FerryError `transport` (retryable) when the gateway cannot be reached, times out,
   *   answers other than HTTP 200, or with a body that is not the documented shape.
   */
  async sendEnvelope(
    transport: Transport,
    operationsJson: readonly string[],
    operationIds: readonly unknown[],
    signal?: AbortSignal,
  ): Promise<EnvelopeAnswer> {
    const started = performance.now();
    try {
      const answer = await this.#http.post(
        transport,
        encodeEnvelope(this.#apiKey, operationsJson),
        signal,
      );
      const read =
        transport === 'sync'
          ? readSyncResponse(answer.body, operationIds)
          : readAsyncResponse(answer.body);
      this.#onRequest(transport, outcomeOf(read), (performance.now() - started) / 1000);
      return read;
    } catch (error: unknown) {
      this.#onRequest(transport, 'transport_error', (performance.now() - started) / 1000);
      throw error;
    }
  }

  /**
   * One operation on the sync endpoint, for account queries (admin API).
   * @returns the item of that operation, successful or not.
   * @throws FerryError `contract` when the operation breaks a spec rule (never sent),
   *   `access_denied` for a rejected key, `gateway_rejected` for another top-level refusal,
   *   `transport` when the gateway is unreachable or answers malformed.
   */
  async callSync(operation: Record<string, unknown>, signal?: AbortSignal): Promise<ItemOutcome> {
    const checked = validateOperation(operation);
    if (!checked.ok) throw new FerryError('contract', checked.message, { retryable: false });
    const answer = await this.sendEnvelope(
      'sync',
      [JSON.stringify(operation)],
      [answerIdOf(operation.type, operation.id)],
      signal,
    );
    if (answer.kind === 'rejected') {
      throw new FerryError(
        answer.accessDenied ? 'access_denied' : 'gateway_rejected',
        answer.error,
        {
          retryable: false,
        },
      );
    }
    if (answer.kind !== 'items') throw new FerryError('internal', 'sync answer without items');
    const item = answer.items[0];
    if (!item) throw new FerryError('transport', 'gateway answered without an item');
    return item;
  }
}
