import { type RecordStore, maskHeaders } from '@onceflow/core';
import { toWire } from '@onceflow/core/kit';
import type { ListCommand } from '../args.js';
import { EXIT } from '../exit-codes.js';
import { type Output, printJson } from '../output.js';
import { historyLines, recordLines } from '../record-format.js';
import { printPage, withoutEnvelope } from './events.js';

/**
 * Prints a page of dead letters (the filter's state is fixed to `dead-lettered`), oldest first,
 * with the total and the next page's cursor. Read-only.
 *
 * @example
 * await listDeadLetters(records, { filter: { source: 'stripe' }, limit: 20, json: false }, output);
 */
export function listDeadLetters(
  records: RecordStore,
  options: ListCommand,
  output: Output,
): Promise<number> {
  const filter = { ...options.filter, state: 'dead-lettered' as const };
  return printPage(records, { ...options, filter }, output, {
    one: 'dead letter',
    key: 'deadLetters',
    dead: true,
  });
}

/**
 * Prints one dead letter in full: its record and history, then the stored envelope's headers
 * (secret and signature headers masked: `isSecretHeader`) and payload. Read-only. Returns 3 when
 * there is no record, or it is not a dead letter.
 *
 * @example
 * await showDeadLetter(records, { source: 'stripe', id: 'evt_1' }, output);
 */
export async function showDeadLetter(
  records: RecordStore,
  options: { readonly source: string; readonly id: string; readonly json?: boolean | undefined },
  output: Output,
): Promise<number> {
  const found = await records.get(options.source, options.id);
  const name = `${options.source}/${options.id}`;
  if (found?.state !== 'dead-lettered') {
    output.err(
      found
        ? `${name} is not a dead letter (it is ${found.state}): see "onceflow events show ${options.source} ${options.id}".`
        : `No record of ${name}.`,
    );
    return EXIT.notFound;
  }
  const record = withoutEnvelope(found);
  const wire = found.envelope && toWire(found.envelope);
  const envelope = wire && { ...wire, headers: maskHeaders(wire.headers) };
  if (options.json) {
    printJson(output, { ...record, envelope: envelope ?? null });
    return EXIT.ok;
  }
  for (const line of recordLines(record)) output.out(line);
  output.out('');
  output.out('History (oldest first):');
  for (const line of historyLines(record.history)) output.out(line);
  output.out('');
  if (!envelope) {
    output.out('(The store kept no envelope for this dead letter.)');
    return EXIT.ok;
  }
  output.out(`occurred at:  ${envelope.occurredAt ?? '-'}`);
  output.out(`payload hash: ${envelope.payloadHash}`);
  output.out('headers:');
  for (const [k, v] of Object.entries(envelope.headers)) output.out(`  ${k}: ${v}`);
  output.out(`payload (${envelope.enc}):`);
  output.out(envelope.payload);
  return EXIT.ok;
}
