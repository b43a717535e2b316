import { DEFAULT_PUBLISH_TIMEOUT_MS, brokerCall } from '@onceflow/core/kit';
import { CompressionTypes, type Kafka, type Message, Partitioners, type Producer } from 'kafkajs';

interface Pending {
  readonly topic: string;
  readonly messages: readonly Message[];
  readonly signal: AbortSignal | undefined;
  resolve(): void;
  reject(error: unknown): void;
}

/** Sends records durably; concurrent calls share one request. */
export interface Publisher {
  connect(): Promise<void>;
  /**
   * Resolves once every record is acknowledged by all in-sync replicas (`acks: -1`). A call whose
   * `signal` aborts while it still waits for its turn is dropped from the queue (never sent) and
   * rejects with the signal's reason.
   */
  send(topic: string, messages: readonly Message[], signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * kafkajs's retries for one request, kept within about `timeoutMs` so that a request to a broker
 * that is gone fails and frees the queue instead of holding it for the client's default 15–40 s
 * of nested retries. The idempotent producer still retries a lost answer with the same sequence
 * number, so a retried request is not written twice.
 */
export const producerRetry = (timeoutMs: number) => ({
  retries: 3,
  initialRetryTime: Math.max(20, Math.round(timeoutMs / 10)),
  maxRetryTime: Math.max(50, Math.round(timeoutMs / 2)),
});

/**
 * An idempotent producer with group commit: calls made while a request is in flight are queued
 * and sent together as the next request (one `sendBatch` across topics), so a hot path never
 * awaits one request per event. Each call resolves when the request holding its records is
 * acknowledged, or rejects with `TransportUnavailableError`. `kafka` should be a client whose
 * connection and request timeouts are about `timeoutMs` (see `createClient`), so one request
 * to an unreachable broker ends soon after the caller's deadline.
 */
export function createPublisher(kafka: Kafka, timeoutMs = DEFAULT_PUBLISH_TIMEOUT_MS): Publisher {
  const newProducer = (): Producer =>
    kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: producerRetry(timeoutMs),
    });
  let producer = newProducer();
  /**
   * A request that failed may still have been written (its answer was lost or came too late),
   * but kafkajs takes its sequence numbers back. The next batch would reuse them: the broker
   * then acknowledges a batch of the same length as a duplicate without writing it, and refuses
   * any other with OUT_OF_ORDER_SEQUENCE_NUMBER, for good. A new producer gets a new producer id
   * and sequences from 0 again.
   */
  const replaceProducer = () => {
    const old = producer;
    producer = newProducer();
    connected = undefined;
    void old.disconnect().catch(() => undefined);
  };
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
    // Calls whose caller stopped waiting are not sent: their publish already answered.
    const batch = queue.filter((p) => !p.signal?.aborted);
    queue = [];
    if (batch.length === 0) return;
    sending = true;
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
          timeout: Math.max(1_000, timeoutMs),
          compression: CompressionTypes.None,
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        }),
      );
      for (const p of batch) p.resolve();
    } catch (err) {
      replaceProducer();
      for (const p of batch) p.reject(err);
    } finally {
      sending = false;
      void flush();
    }
  };

  return {
    connect,
    send(topic, messages, signal) {
      if (messages.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const pending: Pending = { topic, messages, signal, resolve, reject };
        queue.push(pending);
        signal?.addEventListener(
          'abort',
          () => {
            if (!queue.includes(pending)) return; // already sent: its request decides
            queue = queue.filter((p) => p !== pending);
            reject(signal.reason);
          },
          { once: true },
        );
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
