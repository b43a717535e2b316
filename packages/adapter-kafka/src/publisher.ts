import { brokerCall } from '@onceflow/core/kit';
import { CompressionTypes, type Kafka, type Message, Partitioners, type Producer } from 'kafkajs';

interface Pending {
  readonly topic: string;
  readonly messages: readonly Message[];
  resolve(): void;
  reject(error: unknown): void;
}

/** Sends records durably; concurrent calls share one request. */
export interface Publisher {
  connect(): Promise<void>;
  /** Resolves once every record is acknowledged by all in-sync replicas (`acks: -1`). */
  send(topic: string, messages: readonly Message[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * An idempotent producer with group commit: calls made while a request is in flight are queued
 * and sent together as the next request (one `sendBatch` across topics), so a hot path never
 * awaits one request per event. Each call resolves when the request holding its records is
 * acknowledged, or rejects with `TransportUnavailableError`.
 */
export function createPublisher(kafka: Kafka, sendTimeoutMs = 30_000): Publisher {
  const producer: Producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 },
  });
  let queue: Pending[] = [];
  let sending = false;
  let connected: Promise<void> | undefined;

  const connect = () => {
    connected ??= brokerCall('kafka connect the producer', () => producer.connect()).catch(
      (err: unknown) => {
        connected = undefined;
        throw err;
      },
    );
    return connected;
  };

  const flush = async (): Promise<void> => {
    if (sending || queue.length === 0) return;
    sending = true;
    const batch = queue;
    queue = [];
    const byTopic = new Map<string, Message[]>();
    for (const p of batch) {
      const list = byTopic.get(p.topic) ?? [];
      for (const m of p.messages) list.push(m);
      byTopic.set(p.topic, list);
    }
    try {
      await connect();
      await brokerCall('kafka publish', () =>
        producer.sendBatch({
          acks: -1,
          timeout: sendTimeoutMs,
          compression: CompressionTypes.None,
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        }),
      );
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      sending = false;
      void flush();
    }
  };

  return {
    connect,
    send(topic, messages) {
      if (messages.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        queue.push({ topic, messages, resolve, reject });
        if (!sending) queueMicrotask(() => void flush());
      });
    },
    async close() {
      while (sending || queue.length) await new Promise((r) => setTimeout(r, 5));
      await producer.disconnect().catch(() => undefined);
      connected = undefined;
    },
  };
}
