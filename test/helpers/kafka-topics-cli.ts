/**
 * A stand-in for `kafka-topics.sh --create` on the tests' one broker: the documented
 * command lines run as written, each flag read as Kafka's tool reads it; an unknown flag
 * fails. Kafka's own TopicCommand is not in the broker's jars. One broker holds one
 * replica, so the replication factor and `min.insync.replicas` are capped at 1.
 * Usage: node kafka-topics-cli.ts <the arguments of kafka-topics.sh>
 */
import { Kafka, logLevel } from 'kafkajs';

const args = process.argv.slice(2);
let bootstrap: string | undefined;
let topic: string | undefined;
let partitions = 1;
let create = false;
const configEntries: { name: string; value: string }[] = [];
for (let i = 0; i < args.length; i++) {
  const flag = args[i];
  const value = args[i + 1];
  if (flag === '--create') {
    create = true;
    continue;
  }
  if (value === undefined) throw new Error(`${flag} needs a value`);
  i++;
  if (flag === '--bootstrap-server') bootstrap = value;
  // The tests reach the broker as its super user over PLAINTEXT.
  else if (flag === '--command-config') continue;
  else if (flag === '--topic') topic = value;
  else if (flag === '--partitions') partitions = Number(value);
  else if (flag === '--replication-factor') continue;
  else if (flag === '--config') {
    const [name = '', setting = ''] = value.split('=');
    configEntries.push({ name, value: name === 'min.insync.replicas' ? '1' : setting });
  } else throw new Error(`unknown flag ${flag}`);
}
if (!create || !bootstrap || !topic)
  throw new Error('expected --create, --bootstrap-server, --topic');
const admin = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
await admin.connect();
try {
  const created = await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries }],
  });
  if (!created) throw new Error(`${topic} already exists`);
  process.stdout.write(`Created topic ${topic}.\n`);
} finally {
  await admin.disconnect();
}
