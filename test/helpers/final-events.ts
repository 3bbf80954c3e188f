/** Final status events of a topic, read with kcat (librdkafka, read_committed), by command id. */
import { kcatRead } from './fleet.ts';

export async function finalEventsById(
  brokers: string,
  topic: string,
): Promise<Map<string, Record<string, unknown>[]>> {
  const byId = new Map<string, Record<string, unknown>[]>();
  for (const [key, value] of await kcatRead(brokers, topic)) {
    byId.set(key, [...(byId.get(key) ?? []), JSON.parse(value) as Record<string, unknown>]);
  }
  return byId;
}
