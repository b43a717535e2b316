import type { EventRecord, RecordStore } from '@onceflow/core';
import type { ListCommand } from '../args.js';
import { EXIT } from '../exit-codes.js';
import { plural } from '../format.js';
import { type Output, printJson } from '../output.js';
import { historyLines, recordLines, recordTable } from '../record-format.js';

/** The record without its stored envelope (which `dead-letters show` prints, masked). */
export const withoutEnvelope = ({
  envelope: _,
  ...record
}: EventRecord & { readonly envelope?: unknown }): EventRecord => record;

/**
 * Prints one event's record (state, attempts, next attempt, last error, reason, consumer, trace
 * id, times) and its history as a timeline. Read-only. Returns 3 when there is no record.
 *
 * @example
 * await showEvent(records, { source: 'stripe', id: 'evt_1' }, output);
 */
export async function showEvent(
  records: RecordStore,
  options: { readonly source: string; readonly id: string; readonly json?: boolean | undefined },
  output: Output,
): Promise<number> {
  const found = await records.get(options.source, options.id);
  if (!found) {
    output.err(`No record of ${options.source}/${options.id}.`);
    return EXIT.notFound;
  }
  const record = withoutEnvelope(found);
  if (options.json) {
    printJson(output, record);
    return EXIT.ok;
  }
  for (const line of recordLines(record)) output.out(line);
  output.out('');
  output.out(`History (oldest first, ${plural(record.history.length, 'entry', 'entries')}):`);
  for (const line of historyLines(record.history)) output.out(line);
  return EXIT.ok;
}

/** Prints a page of records and the total; shared by `events list` and `dead-letters list`. */
export async function printPage(
  records: RecordStore,
  options: ListCommand,
  output: Output,
  what: { readonly one: string; readonly key: string; readonly dead: boolean },
): Promise<number> {
  const [page, total] = await Promise.all([
    records.list({ ...options.filter, limit: options.limit, cursor: options.cursor }),
    records.count(options.filter),
  ]);
  if (options.json) {
    printJson(output, { total, [what.key]: page.records, next: page.next ?? null });
    return EXIT.ok;
  }
  if (page.records.length === 0) {
    output.out(options.cursor ? `No more ${what.one}s.` : `No ${what.one}s.`);
    return EXIT.ok;
  }
  for (const line of recordTable(page.records, what.dead)) output.out(line);
  const where = options.cursor ? 'a further' : 'the oldest';
  output.out(
    `${plural(total, what.one)} ${total === 1 ? 'matches' : 'match'}; showing ${where} ${page.records.length}.`,
  );
  if (page.next) output.out(`Next page: --cursor ${page.next}`);
  return EXIT.ok;
}

/**
 * Prints the records that match, oldest last state change first, one page (`limit`, `cursor`),
 * the total that match, and the cursor of the next page. Read-only.
 *
 * @example
 * await listEvents(records, { filter: { state: 'retry-scheduled' }, limit: 50, json: false }, output);
 */
export function listEvents(
  records: RecordStore,
  options: ListCommand,
  output: Output,
): Promise<number> {
  return printPage(records, options, output, { one: 'record', key: 'records', dead: false });
}
