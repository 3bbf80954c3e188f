/**
 * Puts ferry's own callback route into the `hook` of send operations that accept one, so
 * the gateway reports each message's final state back to ferry (docs/gateway-api.md, Status callbacks).
 */
import { hookOperationTypes, type OperationType } from '../contract/operation-types.ts';
import { FerryError } from '../errors.ts';

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
 * (`hookOperationTypes`: sms, viber, rcs, rcs+sms, rcs+viber+sms, telegram) and it has no `hook`
 * property of its own; it returns whether it set one.
 *
 * - An operation that carries a `hook` property keeps it untouched, whatever its value: the
 *   command's author chose where its status goes (operation validation judges the value).
 * - `pipeline` never gets one: the gateway does not store `hook` for it and sends the status to
 *   the account's notification address instead (spec: pipeline rule 2). Operators point that
 *   address at the same route (see docs/callbacks.md).
 *
 * @throws FerryError `config` at creation when the options are not usable (see `callbackUrl`).
 */
export function createHookInjector(
  options: HookInjectorOptions,
): (operation: Record<string, unknown>) => boolean {
  const hook = callbackUrl(options);
  return (operation) => {
    const type = operation.type;
    if (typeof type !== 'string' || !hookOperationTypes.has(type as OperationType)) return false;
    if (Object.hasOwn(operation, 'hook')) return false;
    operation.hook = hook;
    return true;
  };
}
