import type { Inbox } from '../contracts/inbox.js';
import { EVENT_STATES, type EventState, type RecordStore } from '../contracts/records.js';
import { createTicker, type Ticker } from '../ticker.js';
import { type Logger, silentLogger } from './logger.js';
import type { OnceflowMetrics } from './metrics.js';

export interface StoreMonitorOptions {
  readonly metrics: OnceflowMetrics;
  /**
   * Sets `oldest_unprocessed_age_seconds` and `inbox_pending` from `inbox.stats()`: the receiver's
   * inbox. When it is not the workers' `records`, they must have it as their `inbox` option, or it
   * never learns that events were processed and these gauges grow for good.
   */
  readonly inbox?: Inbox | undefined;
  /**
   * Sets `onceflow_events{state}` from the event record: one `count` per state each run (on a
   * large PostgreSQL record, an index scan each; raise `intervalMs` if that is too often).
   */
  readonly records?: RecordStore | undefined;
  /** How often to read the stores. Default 15 s (a Prometheus scrape interval). */
  readonly intervalMs?: number | undefined;
  readonly logger?: Logger | undefined;
  readonly now?: (() => number) | undefined;
}

/**
 * Keeps the gauges an operator alerts on current: the age of the oldest accepted event not yet
 * processed, claims not yet enqueued, and the events in the event record per state (the dead
 * letters among them). Reads are periodic, so a gauge is at most `intervalMs` old; a store that fails to answer leaves its gauge as it was and is
 * logged. The timer is unref'd.
 *
 * @example
 * const monitor = createStoreMonitor({ metrics, inbox: store, records: store });
 * monitor.start();
 */
export function createStoreMonitor(options: StoreMonitorOptions): Ticker {
  const { metrics, inbox, records } = options;
  const now = options.now ?? Date.now;
  const run = async (): Promise<number> => {
    let read = 0;
    if (inbox) {
      const stats = await inbox.stats();
      const oldest = stats.oldestUnprocessedAt?.getTime();
      const age = oldest === undefined ? 0 : Math.max(0, (now() - oldest) / 1000);
      metrics.oldestUnprocessedAge.set({}, age);
      metrics.inboxPending.set({}, stats.pending);
      read++;
    }
    if (records) {
      // Read all first: a store failing part-way leaves every state's gauge as it was.
      const counts = new Map<EventState, number>();
      for (const state of EVENT_STATES) counts.set(state, await records.count({ state }));
      for (const [state, n] of counts) metrics.events.set({ state }, n);
      read++;
    }
    return read;
  };
  return createTicker({
    intervalMs: options.intervalMs ?? 15_000,
    logger: options.logger ?? silentLogger,
    name: 'store monitor',
    run,
  });
}
