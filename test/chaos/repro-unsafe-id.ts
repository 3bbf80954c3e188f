/**
 * Reproduction of a finding of the chaos suite (docs/chaos.md, "Findings"): an `id`
 * beyond 2^53 is accepted by the contract, but ferry reads it as a JavaScript number,
 * so two different client ids can become the same number. The result then carries
 * a different id than the command, and a `status` lookup (in-doubt reconciliation)
 * asks the gateway about the other command's id.
 *
 * Run: node test/chaos/repro-unsafe-id.ts — exits 1 while the problem exists, 0 once fixed.
 */
import { readCommand } from '../../src/pipeline/command.ts';

const text = (id: string) =>
  `{"type":"sms","id":${id},"phone":79001234567,"sms_message":"hi","sms_signature":"FERRY"}`;

function read(id: string) {
  return readCommand(
    {
      topic: 'commands',
      partition: 0,
      offset: '0',
      key: Buffer.from(id),
      value: Buffer.from(text(id)),
      headers: {},
      timestamp: '0',
    },
    { defaultTransport: 'sync', transports: new Set(['sync']) },
  );
}

const a = read('9007199254740993');
const b = read('9007199254740992');
const lookupA = a.kind === 'valid' ? `{"type":"status","id":${JSON.stringify(a.id)}}` : '(invalid)';
process.stdout.write(
  `command 9007199254740993: ${a.kind}, id read as ${JSON.stringify(a.id)}\n` +
    `command 9007199254740992: ${b.kind}, id read as ${JSON.stringify(b.id)}\n` +
    `status lookup ferry would send for the first: ${lookupA}\n`,
);
const collide = a.kind === 'valid' && b.kind === 'valid' && a.id === b.id;
process.stdout.write(
  collide
    ? 'PROBLEM: two different ids are the same command id for ferry (results and reconciliation)\n'
    : 'ok: the ids stay distinct or are refused\n',
);
process.exit(collide ? 1 : 0);
