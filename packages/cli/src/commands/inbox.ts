import type { EventState, Inbox } from '@onceflow/core';
import type { InboxBrowser } from '../browser.js';
import { humanDuration, keyValues, plural } from '../format.js';
import { type Output, printJson, toneOut } from '../output.js';

/**
 * Prints the inbox counters: pending (claimed, not enqueued), enqueued, processed, conflicts, and
 * the age of the oldest event not yet processed (the number to alert on). Read-only.
 *
 * @example
 * await inboxStats(inbox, { json: true }, output);
 */
export async function inboxStats(
  inbox: Inbox,
  options: { readonly json?: boolean | undefined; readonly now?: Date | undefined },
  output: Output,
): Promise<number> {
  const stats = await inbox.stats();
  const now = options.now ?? new Date();
  const oldest = stats.oldestUnprocessedAt;
  const ageMs = oldest ? Math.max(0, now.getTime() - oldest.getTime()) : null;
  if (options.json) {
    printJson(output, {
      pending: stats.pending,
      enqueued: stats.enqueued,
      processed: stats.processed,
      conflicts: stats.conflicts,
      oldestUnprocessedAt: oldest?.toISOString() ?? null,
      oldestUnprocessedAgeMs: ageMs,
    });
    return 0;
  }
  const lines = keyValues([
    ['pending', String(stats.pending)],
    ['enqueued', String(stats.enqueued)],
    ['processed', String(stats.processed)],
    ['conflicts', String(stats.conflicts)],
    [
      'oldest unprocessed',
      oldest && ageMs !== null ? `${humanDuration(ageMs)} ago (${oldest.toISOString()})` : '-',
    ],
  ]);
  for (const line of lines) output.out(line);
  return 0;
}

export interface PurgeInboxOptions {
  /** Purge enqueued, completed and discarded records received more than this long ago. */
  readonly olderThanMs: number;
  /** Act. Without it the command only prints what it would do (the default). */
  readonly apply?: boolean | undefined;
  readonly json?: boolean | undefined;
  readonly now?: Date | undefined;
}

/** What `Inbox.purge` deletes (the stores' retention rule). */
const PURGEABLE: readonly EventState[] = ['enqueued', 'completed', 'discarded'];

const FORGET_WARNING =
  'A purged id is forgotten: if its sender delivers it again, the inbox accepts it as new. ' +
  "Keep the retention longer than every sender's retry horizon.";

/**
 * Retention: deletes the enqueued, completed and discarded records received before now −
 * `olderThanMs` (`Inbox.purge`); received claims (the relay still owes them a publish), attempts
 * in progress or scheduled, and dead letters are never purged. A dry run unless `apply`; the dry
 * run counts the records through `browser` when the store offers one.
 *
 * @example
 * await purgeInbox(inbox, browser, { olderThanMs: 30 * 86_400_000, apply: true }, output);
 */
export async function purgeInbox(
  inbox: Inbox,
  browser: InboxBrowser | undefined,
  options: PurgeInboxOptions,
  output: Output,
): Promise<number> {
  const olderThan = new Date((options.now ?? new Date()).getTime() - options.olderThanMs);
  const before = olderThan.toISOString();
  if (!options.apply) {
    const count = browser ? await browser.count({ until: olderThan, states: PURGEABLE }) : null;
    if (options.json) {
      printJson(output, { action: 'purge', dryRun: true, olderThan: before, count });
      return 0;
    }
    const what =
      count === null
        ? 'every enqueued, completed or discarded event'
        : plural(count, 'enqueued, completed or discarded event');
    const head = toneOut(output, 'warn', 'DRY RUN:');
    output.out(`${head} would purge ${what} received before ${before}. Nothing was changed.`);
    if (count === null) output.out('(This store cannot count them without deleting.)');
    output.out(FORGET_WARNING);
    output.out('Run again with --apply to do it.');
    return 0;
  }
  const count = await inbox.purge({ olderThan });
  if (options.json) {
    printJson(output, { action: 'purge', dryRun: false, olderThan: before, count });
    return 0;
  }
  output.out(
    `${toneOut(output, 'ok', 'Purged')} ${plural(count, 'event')} received before ${before}.`,
  );
  return 0;
}
