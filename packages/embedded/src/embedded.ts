import { type RecordStore, silentLogger } from '@onceflow/core';
import { createLifecycle } from '@onceflow/core/kit';
import type { Database } from 'better-sqlite3';
import {
  type EmbeddedOptions,
  type EmbeddedTransportOptions,
  parseEmbeddedOptions,
  parseTransportOptions,
} from './config.js';
import { createDatabaseHandle } from './database.js';
import { openWhenUnlocked } from './start-up.js';
import { createEmbeddedOutbox, type EmbeddedOutbox } from './outbox.js';
import { createEmbeddedStore, type EmbeddedStore } from './store.js';
import { createEmbeddedTransport, type EmbeddedTransport } from './transport/transport.js';
import { createQueueNotifier } from './transport/waker.js';

/** The embedded default: inbox, event record and queues in one SQLite file. */
export interface Embedded {
  /** The inbox, which is also the event record (one row per event): see `EmbeddedStore`. */
  readonly inbox: EmbeddedStore;
  /** The same object as `inbox`, typed for the worker, the CLI and operator tools. */
  readonly records: RecordStore;
  /**
   * The transactional outbox in the same file: `outbox.add(embedded.db, event)` in your
   * transaction, published by `createOutboxDispatcher({ outbox: embedded.outbox, transport })`.
   */
  readonly outbox: EmbeddedOutbox;
  /**
   * A transport over `queue` in the same file. Each call returns a new transport (its own
   * options and subscriptions); all of them close with the instance.
   */
  transport(queue: string, options?: EmbeddedTransportOptions): EmbeddedTransport;
  /**
   * The open better-sqlite3 connection (opened on first access), for your own tables in the same
   * file and for `markProcessedInTransaction`. Do not close it; call `close()`.
   */
  readonly db: Database;
  /**
   * Opens the file (WAL, pragmas) and applies migrations, without the write lock when none is due.
   * While another process holds the lock it needs, it tries again with backoff for up to
   * `startTimeoutMs`. Idempotent. Rejects with `StoreUnavailableError`.
   */
  start(): Promise<void>;
  /** Closes every transport (draining their consumers), then the file. Idempotent; final. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Creates the embedded default over one SQLite file. No I/O happens here: the file is opened by
 * `start()` or by the first operation. Several processes may open the same file (the receiver in
 * one, workers in others); they must share one machine and one local filesystem.
 *
 * @example
 * const embedded = createEmbedded({ path: './onceflow.db' });
 * await embedded.start();
 * const transport = embedded.transport('webhooks');
 * // receiver: createReceiver({ inbox: embedded.inbox, transport, … })
 * // worker:   createWorker({ transport, records: embedded.records, … })
 * await embedded.close();
 */
export function createEmbedded(options: EmbeddedOptions): Embedded {
  const config = parseEmbeddedOptions(options);
  const handle = createDatabaseHandle(config);
  const notifier = createQueueNotifier();
  const logger = config.logger ?? silentLogger;
  const transports = new Set<EmbeddedTransport>();
  const lifecycle = createLifecycle({
    name: 'embedded',
    close: async () => {
      await Promise.all([...transports].map((t) => t.close()));
      handle.close();
    },
  });
  const close = () => lifecycle.close();

  const store = createEmbeddedStore(handle, config);
  return {
    inbox: store,
    records: store,
    outbox: createEmbeddedOutbox(handle),
    transport(queue, transportOptions) {
      lifecycle.assertOpen('transport()');
      const transport = createEmbeddedTransport({
        handle,
        queue,
        config: parseTransportOptions(config, transportOptions),
        synchronous: config.synchronous,
        logger,
        notifier,
      });
      transports.add(transport);
      return transport;
    },
    get db() {
      return handle.get();
    },
    start: () => openWhenUnlocked(handle, { timeoutMs: config.startTimeoutMs, logger }),
    close,
    [Symbol.asyncDispose]: close,
  };
}
