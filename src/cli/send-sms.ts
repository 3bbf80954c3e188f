/**
 * `ferryctl send sms`: produces one `sms` command to the commands topic and
 * waits for its result on the results topic, matched by key: a result has its command's key.
 */
import { randomUUID } from 'node:crypto';
import { validateOperation } from '../contract/index.ts';
import { type InboundRecord, KafkaClient } from '../kafka/kafka-client.ts';
import { createLogger } from '../observability/logger.ts';

export interface SendSmsFlags {
  readonly phone?: string | undefined;
  readonly text?: string | undefined;
  readonly sender?: string | undefined;
  readonly id?: string | undefined;
  readonly brokers?: string | undefined;
  readonly 'commands-topic'?: string | undefined;
  readonly 'results-topic'?: string | undefined;
  readonly 'timeout-ms'?: string | undefined;
  readonly json?: boolean | undefined;
}

export interface SendSmsIo {
  readonly out: (line: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * Gives the consumer's first fetch time to fix its position at the end of the
 * results topic before the command exists, so its result cannot slip before it.
 */
const POSITION_SETTLE_MS = 500;

function describeResult(result: Record<string, unknown>): string {
  if (result.success === true) {
    const details = [
      result.msg_id === undefined ? undefined : `msg_id ${String(result.msg_id)}`,
      result.parts === undefined ? undefined : `parts ${String(result.parts)}`,
      result.request_id === undefined ? undefined : `request_id ${String(result.request_id)}`,
    ].filter((d) => d !== undefined);
    return `sent: id ${String(result.id)}${details.length > 0 ? ` (${details.join(', ')})` : ''}`;
  }
  return `failed: id ${String(result.id)} at stage ${String(result.stage)}: ${String(result.error)}`;
}

/**
 * @returns whether the command's result says success.
 * @throws the error built by `usageError` for missing or invalid flags; Error when no
 *   result arrives in time; FerryError `kafka` when Kafka cannot be reached.
 */
export async function sendSms(
  flags: SendSmsFlags,
  io: SendSmsIo,
  usageError: (message: string) => Error,
): Promise<boolean> {
  for (const name of ['phone', 'text', 'sender'] as const) {
    if (flags[name] === undefined) throw usageError(`send sms needs --${name}`);
  }
  const id = flags.id === undefined ? Date.now() : Number(flags.id);
  const command = {
    type: 'sms',
    id,
    // Digits only become a JSON number; anything else stays text for the contract to refuse.
    phone: /^\d+$/.test(flags.phone ?? '') ? Number(flags.phone) : flags.phone,
    sms_message: flags.text,
    sms_signature: flags.sender,
  };
  // The daemon would refuse it anyway; saying so here is quicker and clearer.
  const checked = validateOperation(command);
  if (!checked.ok) throw usageError(checked.message);

  const brokers = (flags.brokers || io.env.FERRY_KAFKA_BROKERS || '127.0.0.1:9092').split(',');
  const commandsTopic = flags['commands-topic'] || io.env.FERRY_TOPIC_COMMANDS || 'ferry.commands';
  const resultsTopic = flags['results-topic'] || io.env.FERRY_TOPIC_RESULTS || 'ferry.results';
  const timeoutMs = flags['timeout-ms'] === undefined ? 30_000 : Number(flags['timeout-ms']);
  const key = String(id);

  const kafka = new KafkaClient({
    brokers,
    clientId: 'ferryctl',
    logger: createLogger({ level: 'silent' }),
  });
  const consumer = kafka.createRecordConsumer({
    groupId: `ferryctl-${randomUUID()}`,
    topics: [resultsTopic],
    fromBeginning: false,
  });
  const producer = kafka.createProducer();
  let onResult: (record: InboundRecord) => void = () => undefined;
  const result = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no result for id ${key} within ${timeoutMs} ms (is ferry running?)`)),
      timeoutMs,
    );
    onResult = (record) => {
      if (record.key?.toString('utf8') !== key || record.value === null) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(record.value.toString('utf8')) as Record<string, unknown>);
      } catch {
        reject(new Error(`the result for id ${key} is not JSON`));
      }
    };
  });
  result.catch(() => undefined);
  try {
    await consumer.start((record) => onResult(record));
    await new Promise((resolve) => setTimeout(resolve, POSITION_SETTLE_MS));
    await producer.connect();
    await producer.send([{ topic: commandsTopic, key, value: JSON.stringify(command) }]);
    const answer = await result;
    io.out(flags.json ? JSON.stringify(answer) : describeResult(answer));
    return answer.success === true;
  } finally {
    await consumer.stop().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    await kafka.close().catch(() => undefined);
  }
}
