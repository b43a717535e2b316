import type { Admin } from 'kafkajs';
import {
  HEADER_ROOM_BYTES,
  type KafkaConfig,
  type KafkaTransportOptions,
  resolveConfig,
  topicNames,
} from './config.js';
import { createClient } from './client.js';

/**
 * Creates the work topic, its retry topics and the dead-letter topic when missing (idempotent;
 * existing topics are left as they are). The dead-letter topic has one partition (one order for
 * `list`) and is compacted and never expires: purging writes a tombstone that the log cleaner later removes.
 */
export async function ensureTopics(admin: Admin, config: KafkaConfig): Promise<void> {
  const names = topicNames(config.topic, config.retryTiersMs.length);
  const maxBytes = String(config.maxMessageBytes + HEADER_ROOM_BYTES);
  const work = (topic: string) => ({
    topic,
    numPartitions: config.partitions,
    replicationFactor: config.replicationFactor,
    configEntries: [{ name: 'max.message.bytes', value: maxBytes }],
  });
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      work(names.main),
      ...names.retries.map(work),
      {
        topic: names.dlq,
        numPartitions: 1,
        replicationFactor: config.replicationFactor,
        configEntries: [
          { name: 'max.message.bytes', value: maxBytes },
          // compact: tombstones remove purged letters; delete (with no time or size limit):
          // allows DeleteRecords to drop a purged prefix at once
          { name: 'cleanup.policy', value: 'compact,delete' },
          { name: 'retention.ms', value: '-1' },
          { name: 'retention.bytes', value: '-1' },
          { name: 'segment.ms', value: String(3_600_000) },
        ],
      },
    ],
  });
}

/**
 * Deletes a work topic's topics and its consumer group (tests, demo runs, decommissioning).
 * Irreversible: every message and dead letter of the topic is gone.
 *
 * @example
 * await removeKafkaTopology({ topic: 'payments' });
 */
export async function removeKafkaTopology(options: KafkaTransportOptions): Promise<void> {
  const config = resolveConfig(options);
  const names = topicNames(config.topic, config.retryTiersMs.length);
  const admin = createClient(config).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const topics = [names.main, ...names.retries, names.dlq].filter((t) => existing.has(t));
    if (topics.length) await admin.deleteTopics({ topics });
    const groups = (await admin.listGroups()).groups
      .map((g) => g.groupId)
      .filter((g) => g === config.groupId || g.startsWith(`${config.groupId}.`));
    if (groups.length) await admin.deleteGroups(groups).catch(() => undefined);
  } finally {
    await admin.disconnect();
  }
}
