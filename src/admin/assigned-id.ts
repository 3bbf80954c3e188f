/**
 * Client message ids ferry picks itself, for an admin call whose caller gave none (the
 * gateway requires one). Random in [2^52, 2^53 - 1]: within the ids ferry accepts (a
 * JSON number keeps them exact), above the counters and the millisecond and microsecond
 * timestamps producers use as ids (a microsecond timestamp reaches 2^52 in 2112), so
 * a picked id does not meet a producer's, and two picked ids meet with a chance of one
 * in 2^52.
 */
import { randomBytes } from 'node:crypto';

const LOWEST = 2n ** 52n;
const SPAN_BITS = 52n;

/** A fresh id; `random` (bytes) is for tests. */
export function assignedMessageId(random: (size: number) => Uint8Array = randomBytes): bigint {
  const bytes = random(8);
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return LOWEST + (value & ((1n << SPAN_BITS) - 1n));
}
