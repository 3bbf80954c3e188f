/**
 * Replaces a method of a class kafkajs keeps internal (one of its own modules, pinned with
 * it) where kafkajs offers no hook. Each caller wraps once per process and learns whether
 * kafkajs was laid out as expected; when not, nothing is replaced and the caller goes on
 * without its workaround (or refuses to, when going on would be unsafe).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** kafkajs's own error class: its retrier retries only its errors (`retriable` decides). */
export const { KafkaJSError } = require('kafkajs/src/errors.js') as {
  KafkaJSError: new (message: string, options: { retriable: boolean }) => Error;
};

/**
 * Replaces `method` on the prototype of the class `modulePath` exports with what `wrap`
 * makes of the original. @returns false, replacing nothing, when the module or the method
 * is not there.
 */
export function wrapKafkajsMethod<Method extends (...args: never[]) => unknown>(
  modulePath: string,
  method: string,
  wrap: (original: Method) => Method,
): boolean {
  let prototype: Record<string, unknown> | undefined;
  try {
    prototype = (require(modulePath) as { prototype?: Record<string, unknown> }).prototype;
  } catch {
    return false;
  }
  const original = prototype?.[method];
  if (!prototype || typeof original !== 'function') return false;
  prototype[method] = wrap(original as Method);
  return true;
}
