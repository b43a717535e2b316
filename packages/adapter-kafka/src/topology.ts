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
 * existing topics are left as they are), all with `partitions` partitions and the broker's
 * retention: the dead-letter topic is read by `consumeDeadLetters` (the worker records each
 * message in the event record), not kept as a store.
 */
export async function ensureTopics(admin: Admin, config: KafkaConfig): Promise<void> {
  const names = topicNames(config.topic, config.retryTiersMs.length);
  const maxBytes = String(config.maxMessageBytes + HEADER_ROOM_BYTES);
  const topic = (name: string) => ({
    topic: name,
    numPartitions: config.partitions,
    replicationFactor: config.replicationFactor,
    configEntries: [{ name: 'max.message.bytes', value: maxBytes }],
  });
  await admin.createTopics({
    waitForLeaders: true,
    topics: [names.main, ...names.retries, names.dlq].map(topic),
  });
}

/**
 * Deletes a work topic's topics and its consumer groups, the dead-letter one included (tests,
 * demo runs, decommissioning).
 * Irreversible: every message of the topic, the dead-letter topic's included, is gone.
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
