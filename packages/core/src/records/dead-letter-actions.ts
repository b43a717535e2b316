import type { Tracer } from '@opentelemetry/api';
import type { EventRecord, RecordFilter, RecordStore } from '../contracts/records.js';
import type { Transport } from '../contracts/transport.js';
import type { Envelope } from '../envelope.js';
import { UsageError } from '../errors.js';
import { publishInNewTraces } from '../observability/trace-publish.js';
import { dedupeKeyOf } from '../transport-kit/dedupe-key.js';

/** Header on a redriven copy: who redrove it. The worker then acquires the dead-lettered record. */
export const REDRIVE_HEADER = 'x-onceflow-redrive';

/** Which dead letters an operator acts on: all that match the filter, or the listed ones. */
export interface DeadLetterSelection {
  readonly filter?: Omit<RecordFilter, 'state'> | undefined;
  /** Exactly these (source, id) pairs; each must be a dead letter. */
  readonly ids?: readonly { readonly source: string; readonly id: string }[] | undefined;
  /** Most to act on, oldest first. Default: all that match. */
  readonly limit?: number | undefined;
}

export interface DeadLetterActionOptions extends DeadLetterSelection {
  /** Who acts, recorded in each record's history (`cli:alice`, `console:ops`). */
  readonly actor: string;
  /** Act. Without it nothing changes and the result lists what would be touched. */
  readonly apply?: boolean | undefined;
  /** Called after each record acted on (progress for long runs). */
  readonly onProgress?: ((done: number, total: number) => void) | undefined;
}

export interface DeadLetterActionResult {
  readonly dryRun: boolean;
  /** The dead letters selected (acted on, or that would be). */
  readonly selected: readonly EventRecord[];
  /** How many changed (0 on a dry run). */
  readonly done: number;
  /** Selected ids that were not dead letters (listed by id, or changed state meanwhile). */
  readonly skipped: readonly { readonly source: string; readonly id: string }[];
}

const PAGE = 500;

async function select(records: RecordStore, selection: DeadLetterSelection) {
  const limit = selection.limit ?? Number.POSITIVE_INFINITY;
  const selected: EventRecord[] = [];
  const skipped: { source: string; id: string }[] = [];
  if (selection.ids !== undefined) {
    if (selection.ids.length === 0) throw new UsageError('ids is empty: name at least one');
    for (const { source, id } of selection.ids) {
      const record = await records.get(source, id);
      if (record?.state === 'dead-lettered' && selected.length < limit) selected.push(record);
      else skipped.push({ source, id });
    }
    return { selected, skipped };
  }
  let cursor: string | undefined;
  do {
    const page = await records.list({
      ...selection.filter,
      state: 'dead-lettered',
      limit: Math.min(PAGE, limit - selected.length),
      cursor,
    });
    selected.push(...page.records);
    cursor = page.next;
  } while (cursor !== undefined && selected.length < limit);
  return { selected, skipped };
}

/**
 * Sends dead letters back to work: each selected record's stored envelope is published again
 * with the header `x-onceflow-redrive` and a dedupe key of its own (so broker dedupe does not
 * swallow it), then the record moves to `enqueued` with the actor in its history; the worker
 * starts it again at attempt 1. A dry run unless `apply`. Each copy starts a trace of its own,
 * linked to the dead letter's original trace (`publishInNewTraces`).
 *
 * A crash between the publish and the record update leaves a published copy and a record still
 * dead-lettered: the worker acquires it anyway (the header says it is a redrive), so it runs
 * once; running the redrive again publishes another copy, which the record's guard drops once
 * the first completed.
 *
 * @example
 * await redriveDeadLetters({ records, transport }, { filter: { source: 'stripe' }, actor: 'cli:ops', apply: true });
 */
export async function redriveDeadLetters(
  stores: {
    readonly records: RecordStore;
    readonly transport: Pick<Transport, 'publish'>;
    /** For the redrive's new trace per dead letter. Default: the global API's tracer. */
    readonly tracer?: Tracer | undefined;
  },
  options: DeadLetterActionOptions,
): Promise<DeadLetterActionResult> {
  const { selected, skipped } = await select(stores.records, options);
  if (!options.apply) return { dryRun: true, selected, done: 0, skipped };
  const run = new Date().toISOString();
  let done = 0;
  for (const record of selected) {
    const stored = await stores.records.get(record.source, record.id);
    if (stored?.state !== 'dead-lettered' || stored.envelope === undefined) {
      skipped.push({ source: record.source, id: record.id });
      continue;
    }
    const envelope: Envelope = {
      ...stored.envelope,
      headers: { ...stored.envelope.headers, [REDRIVE_HEADER]: options.actor },
    };
    const dedupeKey = `${dedupeKeyOf({ envelope })}:redrive:${run}`;
    await publishInNewTraces(stores.transport, [{ envelope, dedupeKey }], {
      operation: 'redrive',
      actor: options.actor,
      tracer: stores.tracer,
    });
    // False when a worker already took the copy (its begin wrote `redriven by <actor>`).
    await stores.records.act(record.source, record.id, { kind: 'redriven', actor: options.actor });
    done++;
    options.onProgress?.(done, selected.length);
  }
  return { dryRun: false, selected, done, skipped };
}

/**
 * Purges dead letters: each selected record moves to `discarded` with the actor in its history
 * (kept for dedupe and audit until retention removes it). A dry run unless `apply`.
 *
 * @example
 * await discardDeadLetters(records, { ids: [{ source: 'stripe', id: 'evt_1' }], actor: 'cli:ops', apply: true });
 */
export async function discardDeadLetters(
  records: RecordStore,
  options: DeadLetterActionOptions,
): Promise<DeadLetterActionResult> {
  const { selected, skipped } = await select(records, options);
  if (!options.apply) return { dryRun: true, selected, done: 0, skipped };
  let done = 0;
  for (const record of selected) {
    if (await records.act(record.source, record.id, { kind: 'discarded', actor: options.actor }))
      done++;
    else skipped.push({ source: record.source, id: record.id });
    options.onProgress?.(done, selected.length);
  }
  return { dryRun: false, selected, done, skipped };
}
