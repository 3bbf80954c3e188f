/**
 * kafkajs's internal Cluster, for the broker-level requests its public API lacks (an
 * offset commit outside a group, a fetch without a group). Each call makes a cluster of
 * its own from the client's settings, through the factory every kafkajs instance keeps
 * under a private symbol (coordinator-cache.ts wraps the same hook).
 */
import type { Kafka } from './kafkajs.ts';

/** The parts of kafkajs's Broker used through this. */
export interface KafkajsBroker {
  offsetCommit(request: {
    groupId: string;
    groupGenerationId: number;
    memberId: string;
    retentionTime: number;
    topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
  }): Promise<unknown>;
  fetch(request: {
    replicaId: number;
    isolationLevel: number;
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    topics: {
      topic: string;
      partitions: { partition: number; fetchOffset: string; maxBytes: number }[];
    }[];
  }): Promise<{ responses: { topicName: string; partitions: unknown[] }[] }>;
}

/** The parts of kafkajs's Cluster used through this. */
export interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  findGroupCoordinator(query: { groupId: string }): Promise<KafkajsBroker>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findTopicPartitionMetadata(topic: string): readonly { partitionId: number }[];
  fetchTopicsOffset(
    topics: {
      topic: string;
      fromBeginning: boolean;
      partitions: { partition: number }[];
    }[],
  ): Promise<{ topic: string; partitions: { partition: number; offset: string }[] }[]>;
  findBroker(query: { nodeId: number }): Promise<KafkajsBroker>;
}
type ClusterFactory = (options: { allowAutoTopicCreation: boolean }) => KafkajsCluster;

const CREATE_CLUSTER = 'private:Kafka:createCluster';

/** A new, unconnected cluster of `kafka`'s settings. @throws Error when kafkajs no longer has the hook. */
export function newCluster(kafka: Kafka): KafkajsCluster {
  const holder = kafka as unknown as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(holder).find((s) => s.description === CREATE_CLUSTER);
  const create = key === undefined ? undefined : holder[key];
  if (typeof create !== 'function') throw new Error('kafkajs has no cluster factory');
  return (create as ClusterFactory)({ allowAutoTopicCreation: false });
}
