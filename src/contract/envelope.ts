/** Building the request body (spec: Request envelope). */
import { FerryError } from '../errors.ts';
import { ENVELOPE_MIN_OPERATIONS } from './limits.ts';

/**
 * The request body for one envelope: `{"auth":…,"data":[…]}`, identical for both endpoints.
 * `operationsJson` are already-serialized operation objects (JSON text, each one object),
 * so the hot path never re-stringifies a command; they are joined as given, not re-checked.
 *
 * @throws FerryError code `internal` (not retryable) when `operationsJson` is empty: the spec
 *   requires at least 1 item, so an empty envelope is a caller's bug.
 */
export function encodeEnvelope(auth: string, operationsJson: readonly string[]): string {
  if (operationsJson.length < ENVELOPE_MIN_OPERATIONS) {
    throw new FerryError('internal', 'an envelope needs at least 1 operation', {
      retryable: false,
    });
  }
  return `{"auth":${JSON.stringify(auth)},"data":[${operationsJson.join(',')}]}`;
}
