/**
 * Receipts the way real gateways and the proxies in front of them send them, posted by curl
 * (a client ferry did not write) and by node:http, with a valid token: each is written exactly
 * once, to the status topic when it can be read as a status event and raw to the
 * unparsed-callbacks topic when not, and none is refused. Both topics are read back with kcat.
 * A wrong token still gets 404 and writes nothing.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { DEFAULT_PROPAGATE_HEADERS } from '../../src/observability/propagated-headers.ts';
import { rawPost, startReceiverHarness, TEST_TOKEN } from '../callbacks/callback-harness.ts';
import { findTool } from '../deploy/external-tools.ts';
import { testBrokers } from '../helpers/kafka.ts';
import { type KcatRecord, kcatReadAll } from '../helpers/kcat.ts';

const execFileAsync = promisify(execFile);
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** POSTs with curl; `args` are curl's own (`-d`, `-H`, …). Returns the status and body. */
async function curl(
  url: string,
  args: readonly string[],
): Promise<{ status: number; body: string }> {
  const { stdout } = await execFileAsync(
    findTool('curl'),
    ['-sS', '-X', 'POST', '-o', '-', '-w', '\n%{http_code}', ...args, url],
    { timeout: 30_000 },
  );
  const at = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) };
}

function json(record: KcatRecord | undefined): Record<string, unknown> {
  return JSON.parse(record?.value.toString('utf8') ?? 'null') as Record<string, unknown>;
}

test('receipts in every tolerated shape are written once each; a malformed one is kept raw', async (t) => {
  const h = await startReceiverHarness(t, {
    brokers: testBrokers(),
    collect: false,
    receiver: { propagateHeaders: DEFAULT_PROPAGATE_HEADERS },
  });
  const url = h.callbackUrl;
  const posts: { name: string; status: number; body: string }[] = [];
  const post = async (name: string, answer: Promise<{ status: number; body: string }>) => {
    posts.push({ name, ...(await answer) });
  };

  // curl -d sends `application/x-www-form-urlencoded` unless told otherwise: a gateway
  // written in a hurry posts its JSON that way. Numbers for ids, 1 for success, no offset.
  await post(
    'json labelled as a form',
    curl(url, [
      '-d',
      '{"success":1,"id":101,"msg_id":9101,"type":"sms","status":"DELIVERED","updated":"2024-05-01 10:00:00"}',
    ]),
  );
  // The documented shape with a charset, strings for success; sent twice (a retry).
  const documented =
    '{"success":"true","id":"102","msg_id":"9102","status":"READ","updated":"2024-05-01T10:00:00+02:00"}';
  for (const attempt of [1, 2]) {
    await post(
      `documented, attempt ${attempt}`,
      curl(`${url}?traceparent=${TRACEPARENT}&correlation-id=order-102&x-secret=no`, [
        '-H',
        'Content-Type: application/json; charset=utf-8',
        '--data-binary',
        documented,
      ]),
    );
  }
  // A real form, as Twilio-style gateways post receipts.
  await post(
    'form-encoded',
    curl(url, [
      '--data-urlencode',
      'success=0',
      '--data-urlencode',
      'id=103',
      '--data-urlencode',
      'status=REJECTED',
      '--data-urlencode',
      'error=Number blocked',
      '--data-urlencode',
      'updated=2024-05-01T10:00:00+03:00',
    ]),
  );
  // No Content-Type at all; two messages of one async request: two receipts, both kept.
  for (const id of ['104', '105']) {
    await post(
      `no content type, id ${id}`,
      curl(`${url}?traceparent=not-a-traceparent&tracestate=congo=t61rcWkgMzE`, [
        '-H',
        'Content-Type:',
        '--data-binary',
        `{"success":"false","id":${id},"status":"UNDELIVERED","request_id":"req-77","updated":"2024-05-01T10:00:00Z"}`,
      ]),
    );
  }
  // text/plain with Viber replies, a file size as a string.
  await post(
    'text/plain with replies',
    rawPost(url, {
      headers: { 'content-type': 'text/plain' },
      chunks: [
        '{"success":true,"id":"106","status":"REPLIED","updated":"2024-05-01T10:00:00Z",' +
          '"replies":[{"datetime":"2024-05-01 10:00:01","media":{"url":"https://m/1.jpg","filesize":"12"}}]}',
      ],
    }),
  );
  // Malformed, with a valid token: not JSON, and JSON without any id.
  await post('not JSON', curl(url, ['-H', 'Content-Type: application/json', '-d', 'status: ok']));
  await post(
    'no id at all',
    curl(url, [
      '-H',
      'Content-Type: application/json',
      '-d',
      '{"success":true,"status":"DELIVERED"}',
    ]),
  );

  for (const answer of posts) assert.equal(answer.status, 200, `${answer.name}: ${answer.body}`);

  const wrong = await curl(`${h.server.url}/callbacks/${encodeURIComponent(`${TEST_TOKEN}x`)}`, [
    '-H',
    'Content-Type: application/json',
    '-d',
    '{"success":true,"id":"999","status":"DELIVERED"}',
  ]);
  assert.equal(wrong.status, 404);

  const events = await kcatReadAll(h.topic);
  assert.deepEqual(
    events.map((e) => e.key),
    ['101', '102', '103', '104', '105', '106'],
    'each receipt once: the retry of 102 is not written again, 999 not at all',
  );
  const [e101, e102, e103, e104, , e106] = events;
  assert.deepEqual(json(e101), {
    success: true,
    id: '101',
    msg_id: '9101',
    type: 'sms',
    status: 'DELIVERED',
    updated: '2024-05-01T10:00:00.000Z',
    updated_assumed_utc: true,
    received_at: json(e101).received_at,
  });
  assert.equal(json(e102).success, true);
  assert.equal(json(e102).updated, '2024-05-01T08:00:00.000Z');
  assert.deepEqual(e102?.headers, { traceparent: TRACEPARENT, 'correlation-id': 'order-102' });
  assert.deepEqual(
    [json(e103).success, json(e103).error, json(e103).updated],
    [false, 'Number blocked', '2024-05-01T07:00:00.000Z'],
  );
  assert.equal(e104?.headerText, '', 'an invalid traceparent travels not, nor its tracestate');
  assert.deepEqual([json(e104).success, json(e104).request_id], [false, 'req-77']);
  assert.deepEqual(json(e106).replies, [
    {
      datetime: '2024-05-01T10:00:01.000Z',
      media: { url: 'https://m/1.jpg', filesize: 12 },
      datetime_assumed_utc: true,
    },
  ]);

  const unparsed = await kcatReadAll(h.unparsedTopic);
  assert.deepEqual(
    unparsed.map((r) => r.value.toString('utf8')),
    ['status: ok', '{"success":true,"status":"DELIVERED"}'],
    'the bytes as received, once each',
  );
  assert.equal(unparsed[0]?.headers['ferry-reason'], 'not JSON');
  assert.equal(unparsed[0]?.headers['ferry-content-type'], 'application/json');
  assert.match(String(unparsed[1]?.headers['ferry-reason']), /none of id/);
  assert.match(String(unparsed[1]?.headers['ferry-received-at']), /^\d{4}-\d{2}-\d{2}T.*Z$/);
  assert.equal(await h.callbackCount('unauthorized'), 1);
  assert.equal(await h.callbackCount('duplicate'), 1);
});
