import { z } from 'zod';
import type { OutboxLease, OutboxStore } from '../contracts/outbox.js';
import type { Transport } from '../contracts/transport.js';
import { errorInfo } from '../errors.js';
import { type Logger, silentLogger } from '../observability/logger.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import { createTicker, type Ticker } from '../ticker.js';
import { createBackoff } from '../transport-kit/backoff.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { createWaiter } from './waiter.js';

const ms = z.number().int().positive();
const HOUR = 3_600_000;

const schema = z.object({
  outbox: z.custom<OutboxStore>(
    (v) => typeof (v as { lease?: unknown } | null)?.lease === 'function',
    'an OutboxStore',
  ),
  transport: z.custom<Pick<Transport, 'publish'>>(
    (v) => typeof (v as { publish?: unknown } | null)?.publish === 'function',
    'a Transport',
  ),
  batchSize: z.number().int().min(1).max(10_000).default(100),
  leaseMs: ms.default(30_000),
  pollIntervalMs: ms.default(500),
  retryBaseDelayMs: ms.default(200),
  retryMaxDelayMs: ms.default(30_000),
  retainSentMs: z.union([z.number().int().nonnegative(), z.literal(false)]).default(24 * HOUR),
  purgeIntervalMs: ms.default(600_000),
  purgeBatchSize: z.number().int().min(1).max(100_000).default(1000),
  statsIntervalMs: ms.default(15_000),
  logger: z.custom<Logger>().default(silentLogger),
  metrics: z.custom<OnceflowMetrics>().optional(),
});

interface BatchResult {
  readonly published: number;
  readonly failed?: { readonly err: unknown; readonly delayMs: number } | undefined;
}

/** Options of `createOutboxDispatcher`. Only `outbox` and `transport` are required. */
export interface OutboxDispatcherOptions {
  /** The store the events were added to (`createPostgresOutbox`, `embedded.outbox`, …). */
  outbox: OutboxStore;
  /** Where the events go. Only `publish` is used; the dispatcher never closes it. */
  transport: Pick<Transport, 'publish'>;
  /** Rows leased and published in one `publish`. Default 100. */
  batchSize?: number | undefined;
  /**
   * How long a leased batch is this dispatcher's alone (ms). A dispatcher that dies mid-batch
   * holds its rows back this long; then another publishes them again. Longer than a publish
   * ever takes. Default 30 000.
   */
  leaseMs?: number | undefined;
  /** How long the loop sleeps when nothing was due (ms). Default 500. */
  pollIntervalMs?: number | undefined;
  /**
   * After a failed publish the batch is due again after a delay drawn with full jitter from
   * [0, min(retryMaxDelayMs, retryBaseDelayMs · 2^failures)], and the loop waits as long.
   * Defaults 200 and 30 000 ms.
   */
  retryBaseDelayMs?: number | undefined;
  retryMaxDelayMs?: number | undefined;
  /** Sent rows older than this are deleted (ms); `false` keeps them. Default 24 h. */
  retainSentMs?: number | false | undefined;
  /** Time between retention runs (ms). Default 10 min. */
  purgeIntervalMs?: number | undefined;
  /** Rows deleted per statement by retention. Default 1000. */
  purgeBatchSize?: number | undefined;
  /** Time between reads of the outbox depth for `metrics` (ms). Default 15 000. */
  statsIntervalMs?: number | undefined;
  logger?: Logger | undefined;
  /** Receives `outboxPublished`, `outboxDepth` and `outboxOldestUnsentAge`. */
  metrics?: OnceflowMetrics | undefined;
}

/**
 * Publishes what the application wrote to its outbox. Each row goes out with its event id as the
 * envelope id and the broker dedupe key, and is marked sent only after `publish` resolved (the
 * broker confirmed it). Rows of one ordering key are published one at a time, in add order; a row
 * whose publish failed holds back the later rows of its key until it is sent. When the broker is
 * down the batch is rescheduled with backoff and jitter and nothing is lost.
 *
 * At least once: a dispatcher that dies after the broker confirmed and before the mark leaves the
 * rows to be published again when their lease ends. Broker dedupe on the event id (where the
 * broker has it) and the worker's record guard make that second copy do nothing.
 *
 * One batch is published at a time; the next one is leased meanwhile (rows of other keys) and
 * the last one is marked sent behind it. Any number of dispatchers may run on one outbox.
 * `start()` runs the loop (and retention and the depth metrics) until `close()`, which waits for
 * the batch in flight and gives the one leased ahead back. It closes neither the outbox nor the
 * transport: their creator does, after `dispatcher.close()`. Call `runOnce` on a dispatcher that
 * is not started (a script, a test), not beside its own loop.
 */
export interface OutboxDispatcher {
  /** Starts the loop, which keeps the process alive until `close()`. Idempotent; a no-op after `close()`. */
  start(): void;
  /**
   * Publishes due rows batch by batch until none is left; resolves with how many it published.
   * Rejects when a publish failed (the batch is rescheduled first).
   */
  runOnce(): Promise<number>;
  /** Deletes sent rows older than `retainSentMs` now; resolves with how many. */
  purgeSent(): Promise<number>;
  /** Stops the loop and waits for the batch in flight. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * @example
 * const dispatcher = createOutboxDispatcher({ outbox, transport, logger, metrics });
 * dispatcher.start();
 * // on shutdown
 * await dispatcher.close();
 */
export function createOutboxDispatcher(options: OutboxDispatcherOptions): OutboxDispatcher {
  const config = parseConfig('outbox dispatcher config', schema, options);
  const { outbox, transport, batchSize, leaseMs, logger, metrics } = config;
  const backoff = createBackoff({
    baseDelayMs: config.retryBaseDelayMs,
    maxDelayMs: config.retryMaxDelayMs,
  });
  const waiter = createWaiter();
  const tickers: Ticker[] = [];
  let loop: Promise<void> | undefined;
  let closed = false;

  /** Gives the batch up for `delayMs`; if that fails too, the rows come back when their lease ends. */
  const giveUp = async (lease: OutboxLease, err: unknown, delayMs: number) => {
    const seqs = lease.rows.map((r) => r.seq);
    try {
      const error = err === undefined ? undefined : errorInfo(err);
      await outbox.reschedule(lease.token, seqs, { delayMs, error });
    } catch (rescheduleErr) {
      logger.warn(
        { err: rescheduleErr },
        'outbox reschedule failed; the rows are due again when their lease ends',
      );
    }
  };

  /**
   * The last batch's `markSent`, still running while the next batch is leased and published: its
   * rows' keys are held back until it commits, the other keys go on. At most one at a time.
   */
  let marking: Promise<void> | undefined;

  const markSent = (lease: OutboxLease): void => {
    const previous = marking;
    const seqs = lease.rows.map((r) => r.seq);
    const current = (async () => {
      await previous;
      try {
        await outbox.markSent(lease.token, seqs);
      } catch (err) {
        logger.warn(
          { err, count: seqs.length },
          'outbox markSent failed; the rows are published again when their lease ends',
        );
      }
    })();
    marking = current;
    void current.then(() => {
      if (marking === current) marking = undefined;
    });
  };

  /** A lease of due rows; when none is due but a mark is running, once more after it. */
  const leaseDue = async (): Promise<OutboxLease> => {
    const lease = await outbox.lease({ limit: batchSize, leaseMs });
    if (lease.rows.length > 0 || marking === undefined) return lease;
    await marking;
    return outbox.lease({ limit: batchSize, leaseMs });
  };

  /**
   * The next batch, leased while the current one is published (its keys are other keys: the
   * current batch's heads are leased). Given back on failure and on close.
   */
  let ahead: Promise<OutboxLease> | undefined;

  const takeLease = (): Promise<OutboxLease> => {
    const lease = ahead ?? leaseDue();
    ahead = undefined;
    return lease;
  };

  /** Gives the batch leased ahead back, due again after `delayMs`. */
  const giveBackAhead = async (err: unknown, delayMs: number): Promise<void> => {
    const pending = ahead;
    ahead = undefined;
    const lease = await pending?.catch(() => undefined);
    if (lease && lease.rows.length > 0) await giveUp(lease, err, delayMs);
  };

  /** One batch: how many rows it published, or the publish error and how long to wait. */
  const dispatchBatch = async (): Promise<BatchResult> => {
    const lease = await takeLease();
    if (lease.rows.length === 0) return { published: 0 };
    if (!closed) {
      ahead = leaseDue();
      ahead.catch(() => undefined); // its failure surfaces when it is taken
    }
    try {
      await transport.publish(
        lease.rows.map(({ envelope }) => ({ envelope, dedupeKey: envelope.id })),
      );
    } catch (err) {
      const delayMs = backoff.next();
      await Promise.all([giveUp(lease, err, delayMs), giveBackAhead(err, delayMs)]);
      return { published: 0, failed: { err, delayMs } };
    }
    backoff.reset();
    if (metrics) {
      for (const { envelope } of lease.rows)
        metrics.outboxPublished.inc({ source: envelope.source });
    }
    markSent(lease);
    return { published: lease.rows.length };
  };

  const runOnce = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const { published, failed } = await dispatchBatch();
      if (failed) throw failed.err;
      total += published;
      if (published === 0 || closed) {
        await giveBackAhead(undefined, 0);
        await marking;
        return total;
      }
    }
  };

  const run = async (): Promise<void> => {
    while (!closed) {
      let waitMs: number;
      try {
        const { published, failed } = await dispatchBatch();
        if (failed) {
          logger.warn(
            { err: failed.err, delayMs: failed.delayMs },
            'outbox publish failed; the batch is retried after a delay',
          );
        }
        waitMs = failed ? failed.delayMs : published === 0 ? config.pollIntervalMs : 0;
      } catch (err) {
        // The store failed (lease): wait as after a failed publish.
        waitMs = backoff.next();
        logger.warn({ err, delayMs: waitMs }, 'outbox lease failed; retrying after a delay');
      }
      if (waitMs > 0) await waiter.sleep(waitMs);
    }
    await giveBackAhead(undefined, 0);
  };

  const purgeSent = async (): Promise<number> => {
    if (config.retainSentMs === false) return 0;
    let total = 0;
    for (;;) {
      const n = await outbox.purgeSent({
        olderThanMs: config.retainSentMs,
        limit: config.purgeBatchSize,
      });
      total += n;
      if (n < config.purgeBatchSize || closed) return total;
    }
  };

  const close = async (): Promise<void> => {
    closed = true;
    waiter.wakeAll();
    await Promise.all([loop, ...tickers.map((t) => t.close())]);
    await marking;
  };

  return {
    start() {
      if (closed || loop) return;
      loop = run();
      if (config.retainSentMs !== false) {
        tickers.push(
          createTicker({
            intervalMs: config.purgeIntervalMs,
            logger,
            name: 'outbox retention',
            run: purgeSent,
          }),
        );
      }
      if (metrics) {
        tickers.push(
          createTicker({
            intervalMs: config.statsIntervalMs,
            logger,
            name: 'outbox stats',
            run: async () => {
              const stats = await outbox.stats();
              metrics.outboxDepth.set({}, stats.unsent);
              metrics.outboxOldestUnsentAge.set({}, stats.oldestUnsentAgeMs / 1000);
              return stats.unsent;
            },
          }),
        );
      }
      for (const t of tickers) t.start();
    },
    runOnce,
    purgeSent,
    close,
    [Symbol.asyncDispose]: close,
  };
}
