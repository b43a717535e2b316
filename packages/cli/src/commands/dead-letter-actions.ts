import {
  type DeadLetterActionOptions,
  type DeadLetterActionResult,
  type DeadLetterSelection,
  discardDeadLetters,
  type EventRecord,
  type RecordStore,
  redriveDeadLetters,
  type Transport,
} from '@onceflow/core';
import { EXIT } from '../exit-codes.js';
import { humanDuration, plural } from '../format.js';
import { type Output, printJson, toneErr, toneOut } from '../output.js';
import { createPacer } from '../pace.js';
import { createProgress } from '../progress.js';
import { recordTable } from '../record-format.js';
import type { TransportTarget } from '../target.js';

export interface DeadLetterActionCommand {
  readonly select: DeadLetterSelection;
  /** Recorded in each record's history. */
  readonly actor: string;
  /** Most records acted on per second (redrive: published). Default: as fast as it goes. */
  readonly rate?: number | undefined;
  /** Act. Without it the command only prints what it would do (the default). */
  readonly apply?: boolean | undefined;
  readonly json?: boolean | undefined;
  /** Least time between progress lines on `err`, in ms. Default 1000. */
  readonly progressIntervalMs?: number | undefined;
}

export interface RedriveStores {
  readonly records: RecordStore;
  /** Where copies would go, for the dry run (`rabbitmq queue "events"`); undefined: no `--to`. */
  readonly plannedDestination: string | undefined;
  /** Opens the transport, only once the command is about to publish. */
  readonly openTransport: () => Promise<TransportTarget>;
}

type Action = 'redrive' | 'purge';

/** Rows a human dry run prints; the count and the JSON form cover every selected dead letter. */
const SHOWN = 20;

const name = (r: { readonly source: string; readonly id: string }) => `${r.source}/${r.id}`;
const summary = (r: EventRecord) => ({
  source: r.source,
  id: r.id,
  type: r.type,
  attempts: r.attempts,
  reason: r.reason,
  updatedAt: r.updatedAt,
});
// The dry run selects the same way either action does; it never publishes.
const NOTHING_PUBLISHED: Pick<Transport, 'publish'> = {
  publish: () => Promise.reject(new Error('a dry run publishes nothing')),
};

/** Why each named id was not selected: no record, or its state. */
async function describeSkipped(
  records: RecordStore,
  skipped: DeadLetterActionResult['skipped'],
): Promise<string> {
  const why = await Promise.all(
    skipped.map(async (s) => {
      const record = await records.get(s.source, s.id);
      return `${name(s)} (${record ? record.state : 'no record'})`;
    }),
  );
  return why.join(', ');
}

/** Beyond `--limit`: how many more dead letters match than were selected. */
async function beyondLimit(records: RecordStore, select: DeadLetterSelection, selected: number) {
  if (select.ids !== undefined || select.limit === undefined || selected < select.limit) return 0;
  const matching = await records.count({ ...select.filter, state: 'dead-lettered' });
  return Math.max(0, matching - selected);
}

function printDryRun(
  action: Action,
  selected: readonly EventRecord[],
  more: number,
  effect: string,
  rate: number | undefined,
  output: Output,
) {
  const verb = action === 'redrive' ? 'redrive' : 'purge';
  output.out(
    `${toneOut(output, 'warn', 'DRY RUN:')} would ${verb} ${plural(selected.length, 'dead letter')}. Nothing was changed.`,
  );
  if (selected.length > 0) {
    output.out(effect);
    if (rate !== undefined)
      output.out(
        `At --rate ${rate}/s that takes about ${humanDuration((selected.length / rate) * 1000)}.`,
      );
    for (const line of recordTable(selected.slice(0, SHOWN), true)) output.out(line);
    if (selected.length > SHOWN) output.out(`… and ${selected.length - SHOWN} more.`);
  }
  if (more > 0) output.out(`${more} more match beyond --limit.`);
  if (selected.length > 0) output.out('Run again with --apply to do it.');
}

async function act(
  action: Action,
  stores: RedriveStores,
  options: DeadLetterActionCommand,
  output: Output,
): Promise<number> {
  const { records } = stores;
  const base: DeadLetterActionOptions = { ...options.select, actor: options.actor, apply: false };
  const plan =
    action === 'redrive'
      ? await redriveDeadLetters({ records, transport: NOTHING_PUBLISHED }, base)
      : await discardDeadLetters(records, base);
  if (plan.skipped.length > 0) {
    const why = await describeSkipped(records, plan.skipped);
    output.err(toneErr(output, 'error', `Not dead letters: ${why}. Nothing was changed.`));
    return EXIT.notFound;
  }
  const { selected } = plan;
  const to = action === 'redrive' ? (stores.plannedDestination ?? null) : undefined;

  if (!options.apply) {
    const more = await beyondLimit(records, options.select, selected.length);
    if (options.json) {
      printJson(output, {
        action,
        dryRun: true,
        actor: options.actor,
        ...(to === undefined ? {} : { to }),
        rate: options.rate ?? null,
        count: selected.length,
        moreBeyondLimit: more,
        deadLetters: selected.map(summary),
      });
      return EXIT.ok;
    }
    const effect =
      action === 'purge'
        ? `Each would be marked discarded by ${options.actor}: never delivered again, kept for dedupe and audit until retention.`
        : `Each would be published again ${to ? `to ${to}` : '(give --to with --apply: the transport to publish through)'} with a dedupe key of its own, and recorded as redriven by ${options.actor}; a worker then runs it from attempt 1.`;
    printDryRun(action, selected, more, effect, options.rate, output);
    return EXIT.ok;
  }

  // Acts on exactly the dead letters listed above: one arriving meanwhile stays.
  const apply: DeadLetterActionOptions = {
    ids: selected.map((r) => ({ source: r.source, id: r.id })),
    actor: options.actor,
    apply: true,
  };
  if (selected.length === 0) return finish(action, options, output, undefined, 0, []);
  const pace = createPacer(options.rate);
  const progress = createProgress({
    verb: action,
    output,
    json: options.json,
    intervalMs: options.progressIntervalMs,
  });
  let done = 0;
  const onProgress = (n: number, total: number) => {
    done = n;
    progress.update(n, total);
  };
  let destination: string | undefined;
  try {
    let result: DeadLetterActionResult;
    if (action === 'redrive') {
      const target = await stores.openTransport();
      destination = target.destination;
      const transport: Pick<Transport, 'publish'> = {
        publish: async (messages) => {
          await pace();
          await target.transport.publish(messages);
        },
      };
      result = await redriveDeadLetters({ records, transport }, { ...apply, onProgress });
    } else {
      const paced: RecordStore = {
        ...records,
        act: async (source, id, a) => {
          await pace();
          return records.act(source, id, a);
        },
      };
      result = await discardDeadLetters(paced, { ...apply, onProgress });
    }
    progress.done(result.done, selected.length);
    return finish(action, options, output, destination, result.done, result.skipped);
  } catch (err) {
    if (destination === undefined && action === 'redrive') throw err;
    const what = `${action === 'redrive' ? 'Redrive' : 'Purge'} stopped after ${done} of ${plural(selected.length, 'dead letter')}`;
    output.err(toneErr(output, 'error', `${what}: ${(err as Error).message}`));
    output.err(
      'Those done are no longer dead letters: run the same command again to go on with the rest.',
    );
    return EXIT.failed;
  }
}

function finish(
  action: Action,
  options: DeadLetterActionCommand,
  output: Output,
  destination: string | undefined,
  done: number,
  skipped: DeadLetterActionResult['skipped'],
): number {
  if (options.json) {
    printJson(output, {
      action,
      dryRun: false,
      actor: options.actor,
      ...(action === 'redrive' ? { to: destination ?? null } : {}),
      rate: options.rate ?? null,
      count: done,
      skipped,
    });
    return EXIT.ok;
  }
  const what = plural(done, 'dead letter');
  output.out(
    action === 'redrive'
      ? `${toneOut(output, 'ok', 'Redrove')} ${what}${destination ? ` to ${destination}` : ''} as ${options.actor}.`
      : `${toneOut(output, 'ok', 'Purged')} ${what} as ${options.actor}: marked discarded, kept for dedupe and audit until retention.`,
  );
  if (skipped.length > 0)
    output.out(
      `${plural(skipped.length, 'dead letter')} changed meanwhile (redriven, purged or taken by a worker) and left alone: ${skipped.map(name).join(', ')}.`,
    );
  return EXIT.ok;
}

/**
 * Sends dead letters back to work through the event record (core's `redriveDeadLetters`): each
 * stored envelope is published again through the transport `openTransport` opens, and the record
 * shows who redrove it. A dry run unless `apply`: it then prints how many and which, and what each
 * would go through, and changes nothing. Named ids that are not dead letters make it return 3
 * before anything is touched. With `apply` it acts on exactly the dead letters it selected, at most
 * `rate` a second, with progress lines on `err` for long runs; a failed publish stops it (1).
 *
 * @example
 * await redriveCommand({ records, plannedDestination, openTransport }, { select: { filter: {} }, actor: 'cli:ops', apply: true }, output);
 */
export function redriveCommand(
  stores: RedriveStores,
  options: DeadLetterActionCommand,
  output: Output,
): Promise<number> {
  return act('redrive', stores, options, output);
}

/**
 * Purges dead letters (core's `discardDeadLetters`): each moves to `discarded` with the actor in
 * its history. A dry run unless `apply`, with the same selection rules as `redriveCommand`.
 *
 * @example
 * await purgeCommand(records, { select: { ids: [{ source: 'stripe', id: 'evt_1' }] }, actor: 'cli:ops', apply: true }, output);
 */
export function purgeCommand(
  records: RecordStore,
  options: DeadLetterActionCommand,
  output: Output,
): Promise<number> {
  const openTransport = () => Promise.reject(new Error('a purge publishes nothing'));
  return act('purge', { records, plannedDestination: undefined, openTransport }, options, output);
}
