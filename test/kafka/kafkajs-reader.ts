/**
 * A bare kafkajs consumer in a process of its own, so that no codec ferry registers
 * in the test process reaches it: reads `count` records of a topic from the beginning
 * and prints one JSON line, `{"values":[...]}`, or `{"crash":"message"}` when kafkajs
 * gives up. With `--ferry-codecs` it loads ferry's codecs (and bounded decoding) first.
 *
 * Usage: node test/kafka/kafkajs-reader.ts BROKERS TOPIC COUNT [--ferry-codecs]
 */
import kafkajs from 'kafkajs';

const [brokers = '', topic = '', countText = '1', flag] = process.argv.slice(2);
// Loaded only when asked for: ferry's kafka modules also put its bounded decoding of
// compressed batches under kafkajs, which reads every codec itself.
if (flag === '--ferry-codecs') {
  const { registerCompressionCodecs } = await import('../../src/kafka/compression.ts');
  registerCompressionCodecs();
}

const kafka = new kafkajs.Kafka({
  clientId: 'kafkajs-reader',
  brokers: brokers.split(','),
  logLevel: kafkajs.logLevel.NOTHING,
});
const consumer = kafka.consumer({ groupId: `kafkajs-reader-${process.pid}-${Date.now()}` });
const values: string[] = [];

function finish(line: Record<string, unknown>): void {
  console.log(JSON.stringify(line));
  void consumer.disconnect().finally(() => process.exit(0));
}

setTimeout(() => finish({ timeout: true, values }), 30_000).unref();
consumer.on(consumer.events.CRASH, (event) => {
  // A coordinator still loading a fresh group is retried by kafkajs: not the crash sought.
  if ((event.payload.error as { retriable?: boolean }).retriable === true) return;
  finish({ crash: event.payload.error.message });
});
await consumer.connect();
await consumer.subscribe({ topics: [topic], fromBeginning: true });
await consumer.run({
  eachMessage: async ({ message }) => {
    values.push(String(message.value));
    if (values.length >= Number(countText)) finish({ values });
  },
});
