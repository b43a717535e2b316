import {
  createLifecycle,
  createSubscriptions,
  dedupeKeyOf,
  encodeWithinLimit,
  parseConsumeOptions,
} from '@onceflow/core/kit';
import type {
  BacklogProbe,
  HealthCheck,
  Logger,
  TopologySetup,
  Transport,
  TransportCapabilities,
} from '@onceflow/core';
import type { EmbeddedTransportConfig } from '../config.js';
import type { DatabaseHandle } from '../database.js';
import { asTransport } from '../errors.js';
import { startConsumer } from './consumer.js';
import { MAX_DELAY_MS } from './delivery.js';
import { createMessageStore } from './messages.js';
import { createQueueNotifier, createWaker, type QueueNotifier } from './waker.js';

/** A transport over one queue of the embedded file. */
export interface EmbeddedTransport extends Transport, TopologySetup, BacklogProbe, HealthCheck {
  readonly name: 'embedded';
  readonly queue: string;
  /** `SELECT 1` on the file's connection, for readiness probes; rejects once closed. */
  check(signal?: AbortSignal): Promise<void>;
}

export interface EmbeddedTransportDeps {
  readonly handle: DatabaseHandle;
  readonly queue: string;
  readonly config: EmbeddedTransportConfig;
  readonly synchronous: 'full' | 'normal';
  readonly logger: Logger;
  /** Shared by the transports of one embedded instance, so a publish wakes the consumers at once. */
  readonly notifier?: QueueNotifier | undefined;
}

function durability(synchronous: 'full' | 'normal'): string {
  return synchronous === 'full'
    ? 'publish resolves once the SQLite transaction holding the messages has committed and its WAL was fsynced (synchronous=FULL): they survive a process crash and a power loss, on one machine'
    : 'publish resolves once the SQLite transaction holding the messages has committed in WAL mode with synchronous=NORMAL: they survive a process crash, but the last commits may roll back on a power loss or OS crash';
}

/**
 * One queue in the embedded SQLite file. Publishing and consuming work from any number of
 * processes sharing the file: a message is leased by one holder at a time (claimed by a single
 * UPDATE … RETURNING under an IMMEDIATE transaction) and redelivered with `attempt + 1` once its
 * lease expires. `close()` drains this transport's subscriptions; the file stays open until the
 * embedded instance closes.
 */
export function createEmbeddedTransport(deps: EmbeddedTransportDeps): EmbeddedTransport {
  const { handle, queue, config } = deps;
  const notifier = deps.notifier ?? createQueueNotifier();
  const store = createMessageStore(handle, queue);
  const subscriptions = createSubscriptions();
  const lifecycle = createLifecycle({
    name: `embedded transport ${queue}`,
    start: () => asTransport('start', () => void handle.open()),
    close: () => subscriptions.closeAll(),
  });

  const capabilities: TransportCapabilities = {
    brokerDedupe: { windowMs: config.dedupeWindowMs },
    orderingPerKey: true,
    lock: { scope: 'message', ms: config.lockMs },
    maxDelayMs: MAX_DELAY_MS,
    maxMessageBytes: config.maxMessageBytes,
    // The queue and the event record are one file: whatever the worker cannot record, it
    // cannot consume either, so there is nothing for a dead-letter queue of its own to catch.
    deliveryLimit: false,
    durability: durability(deps.synchronous),
  };

  return {
    name: 'embedded',
    destination: queue,
    queue,
    capabilities,

    /** Opens the file (once) and deletes the queue's expired dedupe tombstones (every call). */
    async start() {
      await lifecycle.start();
      await asTransport('start', () => void store.sweep(config.dedupeWindowMs));
    },

    async check() {
      lifecycle.assertOpen('check');
      await asTransport('check', () => void handle.stmt('SELECT 1').get());
    },

    async publish(messages) {
      lifecycle.assertOpen('publish'); // the file opens on first use: no start() needed
      if (messages.length === 0) return;
      const rows = messages.map((m) => ({
        dedupeKey: dedupeKeyOf(m),
        orderingKey: m.envelope.key,
        envelope: encodeWithinLimit(m.envelope, config.maxMessageBytes),
      }));
      await asTransport('publish', () => store.publish(rows));
      notifier.notify(queue);
    },

    async backlog() {
      lifecycle.assertOpen('backlog');
      return { queue, ...(await asTransport('backlog', () => store.backlog())) };
    },

    async consume(handler, options) {
      const { concurrency } = parseConsumeOptions(options);
      await lifecycle.start('consume');
      const waker = createWaker();
      const unsubscribe = notifier.subscribe(queue, waker.wake);
      const consumer = startConsumer({
        ...config,
        store,
        queue,
        handler,
        concurrency,
        waker,
        logger: deps.logger,
      });
      return subscriptions.track(async () => {
        await consumer.close();
        unsubscribe();
      });
    },

    close: () => lifecycle.close(),
  };
}
