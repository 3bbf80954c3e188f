/**
 * How a replica names itself in the control topic: its host name (the pod name on
 * Kubernetes) plus a nonce of this start, so a restarted pod is a new replica and the
 * old one's record simply expires. And the version it runs, from package.json.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export function newReplicaId(host: string = hostname()): string {
  return `${host}-${randomBytes(3).toString('hex')}`;
}

/** ferry's package version; `unknown` when package.json cannot be read. */
export function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'version' in parsed) {
      return String(parsed.version);
    }
  } catch {
    // An image without package.json next to src/: the state still names the replica.
  }
  return 'unknown';
}
