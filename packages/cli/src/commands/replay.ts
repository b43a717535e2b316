import {
  type EventState,
  newReplayId,
  publishInNewTraces,
  type RecordStore,
  replayEnvelope,
} from '@onceflow/core';
import type { InboxBrowser, InboxQuery, StoredEvent } from '../browser.js';
import { EXIT } from '../exit-codes.js';
import { humanDuration, plural, table } from '../format.js';
import { type Output, printJson, toneErr, toneOut } from '../output.js';
import { createPacer } from '../pace.js';
import { createProgress } from '../progress.js';
import type { TransportTarget } from '../target.js';
import { listPages, selectByIds, windowPages } from './replay-select.js';

export interface ReplayOptions {
  /** Events received at or after this instant (the window; required unless `ids`). */
  readonly since?: Date | undefined;
  /** Events received before this instant. Default: when the command starts. */
  readonly until?: Date | undefined;
  readonly source?: string | undefined;
  readonly type?: string | undefined;
  /** Exactly these completed events, instead of a window. */
  readonly ids?: readonly { readonly source: string; readonly id: string }[] | undefined;
  /** Most events to replay, oldest first. Default: all that match. */
  readonly limit?: number | undefined;
  /** Names this replay (see `replayEnvelope`). Reuse it to resume a run; default from the clock. */
  readonly replayId?: string | undefined;
  /** Most events published per second. Default: as fast as it goes. */
  readonly rate?: number | undefined;
  /** Publish. Without it the command only prints what it would publish (the default). */
  readonly apply?: boolean | undefined;
  readonly json?: boolean | undefined;
  /** Events per `publish` call and per page read from the inbox. Default 200. */
  readonly batchSize?: number | undefined;
  /** Least time between progress lines on `err`, in ms. Default 1000. */
  readonly progressIntervalMs?: number | undefined;
}

export interface ReplayStores {
  /** Lists a window's stored envelopes; needed unless `ids` are given. */
  readonly browser?: InboxBrowser | undefined;
  /** Reads named ids' records and envelopes; needed with `ids`. */
  readonly records?: RecordStore | undefined;
  /** Where copies would go, for the dry run (`rabbitmq queue "events"`); undefined: no `--to`. */
  readonly plannedDestination?: string | undefined;
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

/** What the run is about, whichever way it selected: the window or the named ids. */
interface Plan {
  readonly replayId: string;
  readonly until: Date | undefined;
  /** `received from … to …`, or `named by id`. */
  readonly what: string;
  /** Events that match (the window's completed ones, or the named ids). */
  readonly matching: number;
  readonly skipped: number;
  /** Pages of the events to publish, read again for the apply. */
  readonly pages: () => AsyncGenerator<readonly StoredEvent[]>;
  /** The flags that make a second run publish exactly these copies again. */
  readonly pin: string;
}

async function windowPlan(
  browser: InboxBrowser,
  options: ReplayOptions & { readonly since: Date },
  replayId: string,
  size: number,
): Promise<Plan> {
  const until = options.until ?? new Date();
  const filter = { since: options.since, until, source: options.source, type: options.type };
  const query: InboxQuery = { ...filter, states: ['completed'] };
  const [matching, skipped] = await Promise.all([
    browser.count(query),
    browser.count({ ...filter, states: NOT_COMPLETED }),
  ]);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  return {
    replayId,
    until,
    what: `received from ${options.since.toISOString()} to ${until.toISOString()}`,
    matching,
    skipped,
    pages: () => windowPages(browser, query, limit, size),
    pin: `--until ${until.toISOString()} --replay-id ${replayId}`,
  };
}

/**
 * Re-publishes completed events from their stored envelopes so workers process them again, e.g.
 * after fixing a handler bug: those the inbox received in a window (`since`, `until`, `source`,
 * `type`) or exactly the named `ids`. Each copy gets the id `${id}#replay-${replayId}` and the
 * header `x-onceflow-replay-of`, so it passes the record's guard on purpose (see
 * `replayEnvelope`) and gets a record of its own at its first delivery.
 *
 * Only `completed` records are replayed: in a window the others are counted and skipped; a named
 * id that has no record, is not completed or has no stored envelope makes it return 3 before
 * anything is published. A dry run unless `apply`: it prints how many, which, where each copy
 * would go and how long `rate` makes it take. With `apply`, each batch is published durably
 * before the next is read, at most `rate` a second, with progress lines on `err` for runs over a
 * second; if a publish fails the command stops, returns 1 and prints the flags to resume with:
 * copies already published carry the same ids again, so broker dedupe and the record's guard drop
 * them.
 *
 * @example
 * await replayEvents({ browser, openTransport }, { since: new Date('2025-03-01'), apply: true }, output);
 */
export async function replayEvents(
  stores: ReplayStores,
  options: ReplayOptions,
  output: Output,
): Promise<number> {
  const replayId = options.replayId ?? newReplayId();
  const size = options.batchSize ?? 200;
  let plan: Plan;
  if (options.ids !== undefined) {
    if (!stores.records) throw new Error('replay by id needs the event record');
    const { events, refused } = await selectByIds(stores.records, options.ids);
    if (refused.length > 0) {
      const why = refused.map((r) => `${r.source}/${r.id} (${r.why})`).join(', ');
      output.err(toneErr(output, 'error', `Not replayable: ${why}. Nothing was published.`));
      return EXIT.notFound;
    }
    plan = {
      replayId,
      until: undefined,
      what: 'named by id',
      matching: events.length,
      skipped: 0,
      pages: () => listPages(events, size),
      pin: `--replay-id ${replayId}`,
    };
  } else {
    if (!stores.browser) throw new Error('replay of a window needs an inbox browser');
    if (!options.since) throw new Error('replay needs since, or ids');
    plan = await windowPlan(stores.browser, { ...options, since: options.since }, replayId, size);
  }
  const info = {
    replayId,
    since: options.ids ? null : (options.since?.toISOString() ?? null),
    until: plan.until?.toISOString() ?? null,
    matching: plan.matching,
    skipped: plan.skipped,
    rate: options.rate ?? null,
  };
  if (!options.apply) return dryRun(stores, options, plan, info, output);
  return apply(stores, options, plan, info, output);
}

async function dryRun(
  stores: ReplayStores,
  options: ReplayOptions,
  plan: Plan,
  info: Record<string, unknown>,
  output: Output,
): Promise<number> {
  const planned: StoredEvent[] = [];
  for await (const page of plan.pages()) planned.push(...page);
  const to = stores.plannedDestination ?? null;
  if (options.json) {
    const events = planned.map(({ envelope: e }) => ({
      id: e.id,
      source: e.source,
      type: e.type,
      receivedAt: e.receivedAt,
      replayedAs: replayEnvelope(e, plan.replayId).id,
    }));
    printJson(output, {
      action: 'replay',
      dryRun: true,
      ...info,
      to,
      count: planned.length,
      events,
    });
    return EXIT.ok;
  }
  const n = planned.length;
  output.out(
    `${toneOut(output, 'warn', 'DRY RUN:')} would replay ${plural(n, 'completed event')} ${plan.what} as replay ${plan.replayId}. Nothing was published.`,
  );
  if (n > 0) {
    const where = to ? `to ${to}` : '(give --to with --apply: the transport to publish through)';
    output.out(
      `Each would be published again ${where} as "<id>#replay-${plan.replayId}" with the header x-onceflow-replay-of, so workers process it again.`,
    );
    if (options.rate !== undefined)
      output.out(
        `At --rate ${options.rate}/s that takes about ${humanDuration((n / options.rate) * 1000)}.`,
      );
    const rows = planned
      .slice(0, SHOWN)
      .map(({ envelope: e }) => [e.receivedAt, e.source, e.type, e.id]);
    for (const line of table(['RECEIVED AT', 'SOURCE', 'TYPE', 'EVENT ID'], rows)) output.out(line);
    if (n > SHOWN) output.out(`… and ${n - SHOWN} more.`);
  }
  if (options.limit !== undefined && n === options.limit && plan.matching > n)
    output.out(`${plan.matching - n} more match beyond --limit.`);
  if (plan.skipped > 0) output.out(SKIPPED(plan.skipped));
  if (n > 0) output.out(`Run again with --apply ${plan.pin} to publish exactly these.`);
  return EXIT.ok;
}

async function apply(
  stores: ReplayStores,
  options: ReplayOptions,
  plan: Plan,
  info: Record<string, unknown>,
  output: Output,
): Promise<number> {
  if (!stores.openTransport) throw new Error('replay --apply needs a transport to publish to');
  const { transport, destination } = await stores.openTransport();
  const total = Math.min(plan.matching, options.limit ?? Number.POSITIVE_INFINITY);
  const size = options.batchSize ?? 200;
  // With a rate, publish a tenth of a second's worth per call so the pace is smooth.
  const step =
    options.rate === undefined ? size : Math.min(size, Math.max(1, Math.floor(options.rate / 10)));
  const pace = createPacer(options.rate === undefined ? undefined : options.rate / step);
  const progress = createProgress({
    verb: 'replay',
    output,
    json: options.json,
    intervalMs: options.progressIntervalMs,
  });
  let published = 0;
  try {
    for await (const page of plan.pages()) {
      for (let i = 0; i < page.length; i += step) {
        const messages = page.slice(i, i + step).map(({ envelope }) => {
          const copy = replayEnvelope(envelope, plan.replayId);
          return { envelope: copy, dedupeKey: copy.id };
        });
        await pace();
        // Each copy starts a trace of its own, linked to the original's.
        await publishInNewTraces(transport, messages, { operation: 'replay' });
        published += messages.length;
        progress.update(published, Math.max(total, published));
      }
    }
  } catch (err) {
    output.err(
      toneErr(
        output,
        'error',
        `Replay ${plan.replayId} stopped after ${plural(published, 'event')}: ${(err as Error).message}`,
      ),
    );
    output.err(
      `Resume with ${plan.pin}: copies already published get the same ids again, so they are not processed twice.`,
    );
    return EXIT.failed;
  }
  progress.done(published, published);
  if (options.json) {
    printJson(output, {
      action: 'replay',
      dryRun: false,
      ...info,
      to: destination,
      count: published,
    });
    return EXIT.ok;
  }
  output.out(
    `${toneOut(output, 'ok', 'Replayed')} ${plural(published, 'completed event')} ${plan.what} as replay ${plan.replayId} to ${destination}.`,
  );
  if (plan.skipped > 0) output.out(SKIPPED(plan.skipped));
  return EXIT.ok;
}
