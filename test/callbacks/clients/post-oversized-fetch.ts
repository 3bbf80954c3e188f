/**
 * POSTs one oversized callback body `count` times with Node's fetch (undici) and prints what
 * came back as JSON: {"413":100} or {"413":64,"EPIPE":36}. Run as a process of its own, so the
 * server under test shares no event loop with its client.
 *
 * Usage: node post-oversized-fetch.ts URL COUNT BODY_FILE
 */
import { readFileSync } from 'node:fs';

const [url = '', count = '0', bodyFile = ''] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const outcomes: Record<string, number> = {};
const tally = (outcome: string) => {
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
};

/** The innermost cause's code (EPIPE, ECONNRESET, UND_ERR_SOCKET), else the error's name. */
function outcomeOf(error: unknown): string {
  let current: unknown = error;
  let name = error instanceof Error ? error.name : String(error);
  while (current instanceof Error) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') name = code;
    current = current.cause;
  }
  return name;
}

for (let i = 0; i < Number(count); i++) {
  try {
    const answer = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(20_000),
    });
    await answer.arrayBuffer();
    tally(String(answer.status));
  } catch (error: unknown) {
    tally(outcomeOf(error));
  }
}
process.stdout.write(`${JSON.stringify(outcomes)}\n`);
