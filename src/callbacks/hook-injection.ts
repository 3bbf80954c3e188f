/**
 * Puts ferry's own callback route into the `hook` of send operations that accept one, so
 * the gateway reports each message's final state back to ferry (docs/gateway-api.md, Status callbacks).
 */
import {
  hookOperationTypes,
  type OperationType,
  type Transport,
} from '../contract/operation-types.ts';
import { FerryError } from '../errors.ts';
import { propagatedHeaders } from '../observability/propagated-headers.ts';

/** The path every callback arrives on; `{token}` is one URL path segment. */
export const CALLBACK_ROUTE = '/callbacks/:token';

export interface HookInjectorOptions {
  /**
   * Public base URL under which the gateway reaches this service (FERRY_CALLBACK_PUBLIC_URL),
   * e.g. `https://ferry.example.com` or `https://example.com/ferry`. Trailing slashes are ignored.
   */
  readonly publicUrl: string;
  /** The secret the callback URL carries (FERRY_CALLBACK_TOKEN); URL-encoded into the path. */
  readonly token: string;
  /**
   * Lower-case names of the command headers to carry to the status events
   * (FERRY_PROPAGATE_HEADERS); they ride in the hook's query. Default: none.
   */
  readonly propagateHeaders?: readonly string[];
  /**
   * Final status tracking is on: the hook's query names the command's partition
   * (`ferry_partition`) and, for the urgent lane, the lane (`ferry_lane=urgent`), so the
   * replica the callback reaches knows which tracking partition it belongs to.
   */
  readonly tracking?: { readonly lane?: 'urgent' | undefined } | undefined;
}

/** Query parameters of the hook that name where a message is tracked. */
export const PARTITION_PARAM = 'ferry_partition';
export const LANE_PARAM = 'ferry_lane';

/** What the injector knows of the command besides its operation. */
export interface HookContext {
  readonly transport: Transport;
  /** The command record's headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** The command record's partition. */
  readonly partition?: number | undefined;
}

/**
 * Builds the callback URL `{publicUrl}/callbacks/{token}`.
 * @throws FerryError `config` when `publicUrl` is not an absolute http(s) URL or `token` is empty.
 */
export function callbackUrl(options: HookInjectorOptions): string {
  let base: URL;
  try {
    base = new URL(options.publicUrl);
  } catch (error: unknown) {
    throw new FerryError('config', 'publicUrl: must be an absolute http(s) URL', {
      cause: error,
      retryable: false,
    });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new FerryError('config', 'publicUrl: must be an absolute http(s) URL', {
      retryable: false,
    });
  }
  if (base.search !== '' || base.hash !== '') {
    throw new FerryError('config', 'publicUrl: must not carry a query or a fragment', {
      retryable: false,
    });
  }
  if (options.token === '') {
    throw new FerryError('config', 'token: must not be empty', { retryable: false });
  }
  const path = base.pathname.replace(/\/+$/, '');
  return `${base.origin}${path}/callbacks/${encodeURIComponent(options.token)}`;
}

/**
 * Returns a function that sets `hook` on an operation (in place) when its `type` accepts one
 * and it has no `hook` property of its own; it returns whether it set one.
 *
 * - Types: `hookOperationTypes` (sms, viber, rcs, rcs+sms, rcs+viber+sms, telegram), and
 *   `pipeline` on the async endpoint only. The gateway does not store a pipeline's `hook` for
 *   its delivery status (that goes to the account's notification address, spec: pipeline
 *   rule 2), but an async pipeline's `hook` is where the `REJECTED` callback of a refused
 *   request goes (rule 3): without one, that refusal is never seen.
 * - An operation that carries a `hook` property keeps it untouched, whatever its value: the
 *   command's author chose where its status goes (operation validation judges the value).
 * - The command's allow-listed trace and correlation headers (`propagateHeaders`) ride in the
 *   hook's query, `?traceparent=…&correlation-id=…`: the callback brings them back, so its
 *   status event carries them, with nothing to remember in between (a restart loses
 *   nothing). Without any, the hook is the bare callback URL.
 *
 * @throws FerryError `config` at creation when the options are not usable (see `callbackUrl`).
 */
export function createHookInjector(
  options: HookInjectorOptions,
): (operation: Record<string, unknown>, context?: HookContext) => boolean {
  const hook = callbackUrl(options);
  const allow = options.propagateHeaders ?? [];
  return (operation, context) => {
    const type = operation.type;
    if (typeof type !== 'string') return false;
    const accepts =
      hookOperationTypes.has(type as OperationType) ||
      (type === 'pipeline' && context?.transport === 'async');
    if (!accepts || Object.hasOwn(operation, 'hook')) return false;
    const carried: Record<string, string> =
      context === undefined ? {} : { ...propagatedHeaders(context.headers, allow) };
    if (options.tracking && context?.partition !== undefined) {
      carried[PARTITION_PARAM] = String(context.partition);
      if (options.tracking.lane) carried[LANE_PARAM] = options.tracking.lane;
    }
    const query = new URLSearchParams(carried).toString();
    operation.hook = query === '' ? hook : `${hook}?${query}`;
    return true;
  };
}
