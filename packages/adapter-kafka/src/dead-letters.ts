import {
  type DeadLetter,
  type DeadLetters,
  type Envelope,
  TransportUnavailableError,
} from '@onceflow/core';
import {
  ONCEFLOW_HEADERS,
  brokerCall,
  dedupeKeyOf,
  readDeadLetterHeaders,
} from '@onceflow/core/kit';
import type { Admin, Consumer, Kafka, KafkaMessage } from 'kafkajs';
import type { KafkaConfig } from './config.js';
import { headerMap, headerText, readEnvelope, toRecord } from './marshal.js';
import type { Publisher } from './publisher.js';

interface Entry {
  readonly letter: DeadLetter;
  readonly offset: number;
  readonly dedupeKey: string;
  /** The wire body, republished unchanged by `redrive`. */
  readonly body: string;
}

export interface DeadLetterStore extends DeadLetters {
  close(): Promise<void>;
}

/**
 * The dead-letter topic (`<topic>.dlq`, one partition, compacted) read as a store. A reader in a
 * group of its own (nothing committed) tails the topic into memory; every call first waits until
 * it has read up to the topic's end, so it sees every dead letter written before the call.
 *
 * Kafka cannot delete one record: `purge` and `redrive` write a tombstone for the dead letter's
 * key, which hides it at once and which the log cleaner compacts away later; when no live dead
 * letter precedes an offset, the records before it are deleted outright (`DeleteRecords`).
 * `redrive` publishes to the work topic with attempt 1 before writing the tombstone.
 */
export function createDeadLetterStore(deps: {
  kafka: Kafka;
  config: KafkaConfig;
  dlq: string;
  publisher: Publisher;
  admin: () => Promise<Admin>;
}): DeadLetterStore {
  const { kafka, config, dlq, publisher } = deps;
  const entries = new Map<string, Entry>();
  let position = 0; // next offset the reader will apply
  let reader: Promise<Consumer> | undefined;

  const apply = (message: KafkaMessage) => {
    const id = message.key?.toString('utf8');
    position = Number(message.offset) + 1;
    if (id === undefined) return;
    if (message.value === null) {
      entries.delete(id);
      return;
    }
    let envelope: Envelope;
    try {
      envelope = readEnvelope(message);
    } catch (err) {
      config.logger.warn({ err, dlq, offset: message.offset }, 'undecodable dead letter skipped');
      return;
    }
    const fields = readDeadLetterHeaders(
      headerMap(message.headers),
      new Date(Number(message.timestamp)).toISOString(),
    );
    entries.set(id, {
      letter: { id, envelope, ...fields },
      offset: Number(message.offset),
      body: message.value.toString('utf8'),
      dedupeKey: dedupeKeyOf({
        envelope,
        dedupeKey: headerText(message.headers, ONCEFLOW_HEADERS.dedupeKey),
      }),
    });
  };

  const startReader = async (): Promise<Consumer> => {
    const consumer = kafka.consumer({
      groupId: `${config.groupId}.dlq-reader.${crypto.randomUUID()}`,
      maxWaitTimeInMs: 100,
      sessionTimeout: config.sessionTimeoutMs,
      heartbeatInterval: config.heartbeatIntervalMs,
    });
    await consumer.connect();
    await consumer.subscribe({ topic: dlq, fromBeginning: true });
    await consumer.run({ autoCommit: false, eachMessage: async ({ message }) => apply(message) });
    return consumer;
  };

  /** Waits until the reader has applied everything written to the topic so far. */
  const sync = async (): Promise<void> => {
    reader ??= startReader().catch((err: unknown) => {
      reader = undefined;
      throw err;
    });
    const admin = await deps.admin();
    await reader;
    const [end] = await admin.fetchTopicOffsets(dlq);
    const high = Number(end?.high ?? 0);
    const low = Number(end?.low ?? 0);
    if (position < low) position = low;
    const deadline = Date.now() + 30_000;
    while (position < high) {
      if (Date.now() > deadline)
        throw new TransportUnavailableError(`kafka: the dead-letter reader of ${dlq} fell behind`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const guarded = <T>(op: string, fn: () => Promise<T>): Promise<T> =>
    brokerCall(`kafka deadLetters.${op}`, fn);

  const select = (ids?: readonly string[]): Entry[] => {
    const all = [...entries.values()].sort((a, b) => a.offset - b.offset);
    if (ids === undefined) return all;
    const wanted = new Set(ids);
    return all.filter((e) => wanted.has(e.letter.id));
  };

  /** Tombstones the entries, then deletes the records before the oldest live one. */
  const remove = async (chosen: readonly Entry[]): Promise<void> => {
    if (chosen.length === 0) return;
    await publisher.send(
      dlq,
      chosen.map((e) => ({ key: e.letter.id, value: null })),
    );
    await sync();
    const oldest = select()[0];
    const admin = await deps.admin();
    const [end] = await admin.fetchTopicOffsets(dlq);
    const upTo = oldest?.offset ?? Number(end?.high ?? 0);
    if (upTo > Number(end?.low ?? 0))
      await admin
        .deleteTopicRecords({ topic: dlq, partitions: [{ partition: 0, offset: String(upTo) }] })
        .catch((err: unknown) =>
          // a topic made elsewhere with cleanup.policy=compact only: the tombstones still hide them
          config.logger.warn({ err, dlq }, 'dead-letter prefix not deleted; compaction will'),
        );
  };

  return {
    list: (options) =>
      guarded('list', async () => {
        await sync();
        const all = select().map((e) => e.letter);
        return options?.limit === undefined ? all : all.slice(0, options.limit);
      }),
    get: (id) =>
      guarded('get', async () => {
        await sync();
        return entries.get(id)?.letter;
      }),
    count: () =>
      guarded('count', async () => {
        await sync();
        return entries.size;
      }),
    redrive: (ids) =>
      guarded('redrive', async () => {
        await sync();
        const chosen = select(ids);
        if (chosen.length === 0) return 0;
        await publisher.send(
          config.topic,
          chosen.map((e) =>
            toRecord(e.letter.envelope, e.body, { dedupeKey: e.dedupeKey, attempt: 1 }),
          ),
        );
        await remove(chosen);
        return chosen.length;
      }),
    purge: (ids) =>
      guarded('purge', async () => {
        await sync();
        const chosen = select(ids);
        await remove(chosen);
        return chosen.length;
      }),
    async close() {
      const r = reader;
      reader = undefined;
      if (r) await (await r.catch(() => undefined))?.disconnect().catch(() => undefined);
    },
  };
}
