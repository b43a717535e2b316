import type { EventState } from '@onceflow/core';
import type { InboxBrowser, InboxQuery, StoredEvent } from '../browser.js';
import { plural, table } from '../format.js';
import { type Output, printJson } from '../output.js';
import { newReplayId, replayEnvelope } from '../replay-envelope.js';
import type { TransportTarget } from '../target.js';

export interface ReplayOptions {
  /** Events received at or after this instant. */
  readonly since: Date;
  /** Events received before this instant. Default: when the command starts. */
  readonly until?: Date | undefined;
  readonly source?: string | undefined;
  readonly type?: string | undefined;
  /** Most events to replay, oldest first. Default: all that match. */
  readonly limit?: number | undefined;
  /** Names this replay (see `replayEnvelope`). Reuse it to resume a run; default from the clock. */
  readonly replayId?: string | undefined;
  /** Publish. Without it the command only prints what it would publish (the default). */
  readonly apply?: boolean | undefined;
  readonly json?: boolean | undefined;
  /** Events per `publish` call and per page read from the inbox. Default 200. */
  readonly batchSize?: number | undefined;
}

export interface ReplayStores {
  readonly browser: InboxBrowser;
  /** Opens the transport to publish through; called only with `apply`, once. */
  readonly openTransport?: (() => Promise<TransportTarget>) | undefined;
}

/** Rows the human dry run prints; the count and the JSON form always cover every event. */
const SHOWN = 50;

const NOT_COMPLETED: readonly EventState[] = [
  'received',
  'enqueued',
  'processing',
  'retry-scheduled',
  'dead-lettered',
  'discarded',
];
const SKIPPED = (n: number) =>
  `${plural(n, 'event')} in the window not completed (on their way, dead-lettered or discarded), skipped.`;

async function* pages(browser: InboxBrowser, query: InboxQuery, limit: number, size: number) {
  let after: string | undefined;
  let left = limit;
  while (left > 0) {
    const page = await browser.list({ ...query, limit: Math.min(size, left), after });
    if (page.events.length > 0) yield page.events;
    left -= page.events.length;
    if (page.next === undefined || page.events.length === 0) return;
    after = page.next;
  }
}

/**
 * Re-publishes completed events from the inbox's stored envelopes so workers process them again,
 * e.g. after fixing a handler bug. Each copy gets the id `${id}#replay-${replayId}` and the header
 * `x-onceflow-replay-of`, so it passes the record's guard on purpose (see `replayEnvelope`) and
 * gets a record of its own at its first delivery.
 *
 * Only `completed` records are replayed; the others in the window are counted and skipped (still
 * on their way, dead-lettered: redrive those instead, or discarded). A dry run unless `apply`.
 * With `apply`, each batch is published durably before the next is read; if one fails the
 * command stops, returns 1 and prints the replay id to resume with: copies already published
 * carry the same ids again, so broker dedupe and the record's guard drop them.
 *
 * @example
 * await replayEvents({ browser, openTransport }, { since: new Date('2025-03-01'), apply: true }, output);
 */
export async function replayEvents(
  stores: ReplayStores,
  options: ReplayOptions,
  output: Output,
): Promise<number> {
  const until = options.until ?? new Date();
  const replayId = options.replayId ?? newReplayId();
  const filter = { since: options.since, until, source: options.source, type: options.type };
  const query: InboxQuery = { ...filter, states: ['completed'] };
  const [matching, skipped] = await Promise.all([
    stores.browser.count(query),
    stores.browser.count({ ...filter, states: NOT_COMPLETED }),
  ]);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const size = options.batchSize ?? 200;
  const window = `received from ${options.since.toISOString()} to ${until.toISOString()}`;
  const info = {
    replayId,
    since: options.since.toISOString(),
    until: until.toISOString(),
    matching,
    skipped,
  };

  if (!options.apply) {
    const planned: StoredEvent[] = [];
    for await (const page of pages(stores.browser, query, limit, size)) planned.push(...page);
    if (options.json) {
      const events = planned.map(({ envelope: e }) => ({
        id: e.id,
        source: e.source,
        type: e.type,
        receivedAt: e.receivedAt,
        replayedAs: replayEnvelope(e, replayId).id,
      }));
      printJson(output, { action: 'replay', dryRun: true, ...info, count: planned.length, events });
      return 0;
    }
    output.out(
      `DRY RUN: would replay ${plural(planned.length, 'completed event')} ${window} as replay ${replayId}. Nothing was published.`,
    );
    const rows = planned
      .slice(0, SHOWN)
      .map(({ envelope: e }) => [e.receivedAt, e.source, e.type, e.id]);
    if (rows.length > 0)
      for (const line of table(['RECEIVED AT', 'SOURCE', 'TYPE', 'EVENT ID'], rows))
        output.out(line);
    if (planned.length > SHOWN) output.out(`… and ${planned.length - SHOWN} more.`);
    if (
      options.limit !== undefined &&
      planned.length === options.limit &&
      matching > planned.length
    )
      output.out(`${matching - planned.length} more match beyond --limit.`);
    if (skipped > 0) output.out(SKIPPED(skipped));
    if (planned.length > 0) {
      const pin = `--until ${until.toISOString()} --replay-id ${replayId}`;
      output.out(`Run again with --apply ${pin} to publish exactly these.`);
    }
    return 0;
  }

  if (!stores.openTransport) throw new Error('replay --apply needs a transport to publish to');
  const { transport, destination } = await stores.openTransport();
  let published = 0;
  try {
    for await (const page of pages(stores.browser, query, limit, size)) {
      const messages = page.map(({ envelope }) => {
        const copy = replayEnvelope(envelope, replayId);
        return { envelope: copy, dedupeKey: copy.id };
      });
      await transport.publish(messages);
      published += messages.length;
    }
  } catch (err) {
    output.err(
      `Replay ${replayId} stopped after ${plural(published, 'event')}: ${(err as Error).message}`,
    );
    output.err(
      `Resume with --until ${until.toISOString()} --replay-id ${replayId}: copies already published get the same ids again, so they are not processed twice.`,
    );
    return 1;
  }
  if (options.json) {
    printJson(output, { action: 'replay', dryRun: false, ...info, count: published });
    return 0;
  }
  output.out(
    `Replayed ${plural(published, 'completed event')} ${window} as replay ${replayId} to ${destination}.`,
  );
  if (skipped > 0) output.out(SKIPPED(skipped));
  return 0;
}
