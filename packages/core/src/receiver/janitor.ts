import { z } from 'zod';
import type { Inbox } from '../contracts/inbox.js';
import { type Logger, silentLogger } from '../observability/logger.js';
import { DEFAULT_INBOX_RETENTION_MS } from './retention.js';
import { createTicker, type Ticker } from '../ticker.js';
import { parseConfig } from '../transport-kit/parse-config.js';

const schema = z.object({
  inbox: z.custom<Pick<Inbox, 'purge'>>(
    (v) => typeof (v as { purge?: unknown } | null)?.purge === 'function',
    'an Inbox',
  ),
  retentionMs: z.number().positive().default(DEFAULT_INBOX_RETENTION_MS),
  intervalMs: z.number().int().positive().default(3_600_000),
  logger: z.custom<Logger>().default(silentLogger),
  now: z.custom<() => Date>((v) => typeof v === 'function').default(() => () => new Date()),
});

export interface RetentionJanitorOptions {
  inbox: Pick<Inbox, 'purge'>;
  /** Enqueued and processed rows received longer ago than this are deleted. Default 4 days. */
  retentionMs?: number | undefined;
  /** How often to purge. Default 1 hour. */
  intervalMs?: number | undefined;
  logger?: Logger | undefined;
  now?: (() => Date) | undefined;
}

/**
 * Purges the inbox periodically. Never deletes pending claims (the inbox's `purge` contract).
 * Its timer does not keep the process alive; runs never overlap. `close` aborts a purge in
 * progress (a store stops it between batches) and waits for it to stop, so shutdown does not wait
 * for a paced purge to finish; the next run goes on from there.
 */
export interface RetentionJanitor extends Ticker {}

/**
 * @example
 * const janitor = createRetentionJanitor({ inbox, retentionMs: DEFAULT_INBOX_RETENTION_MS, intervalMs: 3_600_000 });
 * janitor.start();
 * // on shutdown
 * await janitor.close();
 */
export function createRetentionJanitor(options: RetentionJanitorOptions): RetentionJanitor {
  const { inbox, retentionMs, intervalMs, logger, now } = parseConfig(
    'retention janitor config',
    schema,
    options,
  );
  return createTicker({
    intervalMs,
    logger,
    name: 'inbox retention janitor',
    run: async (signal) => {
      const olderThan = new Date(now().getTime() - retentionMs);
      const purged = await inbox.purge({ olderThan, signal });
      if (purged > 0) logger.info({ purged, olderThan }, 'inbox rows purged');
      return purged;
    },
  });
}
