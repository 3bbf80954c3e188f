/**
 * The baseline ferry is compared with: the plain consumer most teams write first.
 * kafkajs `eachMessage`, one HTTP request per command to the gateway's sync
 * endpoint (awaited), one result produced per message (awaited), offsets
 * auto-committed. No batching, no transactions, no validation before sending.
 *
 * It is a program, run as a child process by bench/run.ts so its CPU and memory
 * are measured alone. Configuration (all required):
 *   BASELINE_BROKERS          comma-separated bootstrap brokers
 *   BASELINE_GROUP            consumer group id
 *   BASELINE_TOPIC_COMMANDS   topic to consume
 *   BASELINE_TOPIC_RESULTS    topic to produce results to
 *   BASELINE_GATEWAY_URL      the gateway's {base_url} (the sync endpoint is /api/json.php)
 *   BASELINE_API_KEY          the account key
 *   BASELINE_PARTITIONS       partitions consumed concurrently (one message in flight per partition)
 * It prints `baseline ready` once it joined the group, and stops on SIGTERM.
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { request } from 'undici';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`baseline: ${name} is required\n`);
    process.exit(1);
  }
  return value;
}

const brokers = required('BASELINE_BROKERS').split(',');
const groupId = required('BASELINE_GROUP');
const commandsTopic = required('BASELINE_TOPIC_COMMANDS');
const resultsTopic = required('BASELINE_TOPIC_RESULTS');
const endpoint = `${required('BASELINE_GATEWAY_URL')}/api/json.php`;
const apiKey = required('BASELINE_API_KEY');
const partitions = Number(required('BASELINE_PARTITIONS'));

const kafka = new Kafka({ clientId: 'baseline', brokers, logLevel: logLevel.ERROR });
const consumer = kafka.consumer({ groupId });
const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });

interface GatewayItem {
  success?: boolean;
  error?: string;
  data?: { msg_id?: string; parts?: number };
}

/** One command, one request: the code a first version of such a consumer usually has. */
async function handle(value: string): Promise<Record<string, unknown>> {
  let operation: { id?: unknown; type?: unknown };
  try {
    operation = JSON.parse(value) as { id?: unknown; type?: unknown };
  } catch {
    return { success: false, error: 'not JSON' };
  }
  try {
    const response = await request(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth: apiKey, data: [operation] }),
    });
    const body = (await response.body.json()) as {
      success?: boolean;
      error?: string;
      data?: GatewayItem[];
    };
    const item = body.data?.[0];
    return {
      id: operation.id,
      type: operation.type,
      success: item?.success === true,
      error: item?.error ?? body.error,
      msg_id: item?.data?.msg_id,
      parts: item?.data?.parts,
      completed_at: new Date().toISOString(),
    };
  } catch (error: unknown) {
    return { id: operation.id, type: operation.type, success: false, error: String(error) };
  }
}

await producer.connect();
await consumer.connect();
consumer.on(consumer.events.GROUP_JOIN, () => process.stdout.write('baseline ready\n'));
await consumer.subscribe({ topics: [commandsTopic], fromBeginning: true });
await consumer.run({
  partitionsConsumedConcurrently: partitions,
  eachMessage: async ({ message }) => {
    const result = await handle(message.value?.toString('utf8') ?? '');
    await producer.send({
      topic: resultsTopic,
      messages: [{ key: message.key, value: JSON.stringify(result) }],
    });
  },
});

const stop = async (): Promise<void> => {
  await consumer.disconnect().catch(() => undefined);
  await producer.disconnect().catch(() => undefined);
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
