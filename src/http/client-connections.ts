/**
 * Open connections counted per client, so that one client cannot hold every connection a
 * port allows (README, HTTP, metrics and logs). A client is its IPv4 address, or the /64
 * prefix of its IPv6 address: one IPv6 host is routinely given a whole /64, so counting
 * single IPv6 addresses would let it open the limit once per address.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { FerryError } from '../errors.ts';

/** Counts connections per client against a cap. */
export class ClientConnections {
  readonly #max: number;
  readonly #open = new Map<string, number>();

  /** @throws FerryError `config` when `maxPerClient` is not a positive integer. */
  constructor(maxPerClient: number) {
    if (!Number.isInteger(maxPerClient) || maxPerClient < 1) {
      throw new FerryError('config', 'maxConnectionsPerClient: must be a positive integer', {
        retryable: false,
      });
    }
    this.#max = maxPerClient;
  }

  /**
   * Admits one connection from `address` when its client holds fewer than the cap.
   * @returns the release to call once the connection closed (calling it again does nothing),
   *   or undefined when the client already holds the cap (nothing is counted then).
   */
  admit(address: string): (() => void) | undefined {
    const key = clientKey(address);
    const held = this.#open.get(key) ?? 0;
    if (held >= this.#max) return undefined;
    this.#open.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(key) ?? 1) - 1;
      // Clients that left are forgotten: the map holds only clients with connections open.
      if (left > 0) this.#open.set(key, left);
      else this.#open.delete(key);
    };
  }

  /** Connections the client of `address` holds now. */
  heldBy(address: string): number {
    return this.#open.get(clientKey(address)) ?? 0;
  }

  /** Clients holding at least one connection. */
  get clients(): number {
    return this.#open.size;
  }
}

/**
 * The client an address belongs to: an IPv4 address (also when the socket shows it
 * IPv4-mapped, `::ffff:a.b.c.d`, as a dual-stack listener does), the /64 prefix of an IPv6
 * address (zone id dropped), anything else as it is.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  const [bare = address] = address.split('%');
  if (!isIPv6(bare)) return address;
  return `${ipv6Groups(bare).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, lower-case hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  let text = address.toLowerCase();
  // An embedded IPv4 tail (`64:ff9b::192.0.2.1`) stands for the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => Number.parseInt(group, 16).toString(16));
}
