import type { DeadLetter, DeadLetters } from '@onceflow/core';
import { toWire } from '@onceflow/core/kit';
import { keyValues, plural, table } from '../format.js';
import { type Output, printJson } from '../output.js';

/** Which dead letters a redrive or purge acts on: the listed ids, or every one stored. */
export type DeadLetterSelection = { readonly all: true } | { readonly ids: readonly string[] };

export interface ListDeadLettersOptions {
  /** Most rows to print, oldest first. Default 50. */
  readonly limit?: number | undefined;
  readonly json?: boolean | undefined;
}

export interface ActOnDeadLettersOptions {
  readonly select: DeadLetterSelection;
  /** Act. Without it the command only prints what it would do (the default). */
  readonly apply?: boolean | undefined;
  readonly json?: boolean | undefined;
}

const summary = (d: DeadLetter) => ({
  id: d.id,
  eventId: d.envelope.id,
  source: d.envelope.source,
  type: d.envelope.type,
  key: d.envelope.key,
  attempts: d.attempts,
  reason: d.reason,
  lastError: d.lastError,
  deadLetteredAt: d.deadLetteredAt,
});

function rows(items: readonly DeadLetter[]): string[] {
  return table(
    ['ID', 'DEAD-LETTERED AT', 'SOURCE', 'TYPE', 'EVENT ID', 'ATTEMPTS', 'REASON'],
    items.map((d) => [
      d.id,
      d.deadLetteredAt,
      d.envelope.source,
      d.envelope.type,
      d.envelope.id,
      String(d.attempts),
      d.reason,
    ]),
  );
}

/**
 * Prints the oldest dead letters and the total depth. Read-only.
 *
 * @example
 * await listDeadLetters(transport.deadLetters, { limit: 20 }, output);
 */
export async function listDeadLetters(
  deadLetters: DeadLetters,
  options: ListDeadLettersOptions,
  output: Output,
): Promise<number> {
  const limit = options.limit ?? 50;
  const [items, total] = await Promise.all([deadLetters.list({ limit }), deadLetters.count()]);
  if (options.json) {
    printJson(output, { total, deadLetters: items.map(summary) });
    return 0;
  }
  if (items.length === 0) {
    output.out('No dead letters.');
    return 0;
  }
  for (const line of rows(items)) output.out(line);
  output.out(`${plural(total, 'dead letter')} in total, showing the oldest ${items.length}.`);
  return 0;
}

/**
 * Prints one dead letter in full: envelope, headers, payload, reason and last error. Read-only.
 * Returns 1 when no dead letter has that id.
 *
 * @example
 * await showDeadLetter(transport.deadLetters, '42', {}, output);
 */
export async function showDeadLetter(
  deadLetters: DeadLetters,
  id: string,
  options: { readonly json?: boolean | undefined },
  output: Output,
): Promise<number> {
  const d = await deadLetters.get(id);
  if (!d) {
    output.err(`No dead letter with id "${id}".`);
    return 1;
  }
  const wire = toWire(d.envelope);
  if (options.json) {
    printJson(output, { ...summary(d), envelope: wire });
    return 0;
  }
  const pairs: [string, string][] = [
    ['id', d.id],
    ['dead-lettered at', d.deadLetteredAt],
    ['reason', d.reason],
    ['attempts', String(d.attempts)],
  ];
  if (d.lastError)
    pairs.push(['last error', `${d.lastError.code} ${d.lastError.name}: ${d.lastError.message}`]);
  pairs.push(
    ['event id', wire.id],
    ['source', wire.source],
    ['type', wire.type],
    ['key', wire.key ?? '-'],
    ['received at', wire.receivedAt],
    ['occurred at', wire.occurredAt ?? '-'],
    ['payload hash', wire.payloadHash],
  );
  for (const line of keyValues(pairs)) output.out(line);
  output.out('headers:');
  for (const [k, v] of Object.entries(wire.headers)) output.out(`  ${k}: ${v}`);
  output.out(`payload (${wire.enc}):`);
  output.out(wire.payload);
  return 0;
}

/** Resolves a selection to dead letters, or to the ids that do not exist. */
async function resolve(
  deadLetters: DeadLetters,
  select: DeadLetterSelection,
): Promise<{ found: DeadLetter[]; missing: string[] }> {
  if ('all' in select) return { found: await deadLetters.list(), missing: [] };
  const ids = [...new Set(select.ids)];
  const got = await Promise.all(ids.map((id) => deadLetters.get(id)));
  return {
    found: got.filter((d): d is DeadLetter => d !== undefined),
    missing: ids.filter((_, i) => got[i] === undefined),
  };
}

async function actOn(
  action: 'redrive' | 'purge',
  deadLetters: DeadLetters,
  options: ActOnDeadLettersOptions,
  output: Output,
): Promise<number> {
  const { found, missing } = await resolve(deadLetters, options.select);
  if (missing.length > 0) {
    output.err(
      `No dead letter with id ${missing.map((id) => `"${id}"`).join(', ')}; nothing was changed.`,
    );
    return 1;
  }
  const ids = found.map((d) => d.id);
  const verb = action === 'redrive' ? 'redrive' : 'purge';
  if (!options.apply) {
    if (options.json) {
      printJson(output, { action, dryRun: true, count: ids.length, ids });
      return 0;
    }
    output.out(`DRY RUN: would ${verb} ${plural(ids.length, 'dead letter')}. Nothing was changed.`);
    if (found.length > 0) {
      for (const line of rows(found)) output.out(line);
      output.out('Run again with --apply to do it.');
    }
    return 0;
  }
  // Acts on exactly the ids resolved above, never "everything": dead letters arriving meanwhile stay.
  const count = ids.length === 0 ? 0 : await deadLetters[action](ids);
  if (options.json) {
    printJson(output, { action, dryRun: false, count, ids });
    return 0;
  }
  const done = action === 'redrive' ? 'Redrove' : 'Purged';
  output.out(
    `${done} ${plural(count, 'dead letter')}${ids.length > 0 ? `: ${ids.join(', ')}` : ''}.`,
  );
  if (count < ids.length) {
    output.out(`${ids.length - count} had already left the store (redriven or purged meanwhile).`);
  }
  return 0;
}

/**
 * Sends dead letters back to the work queue, attempts starting again at 1. A dry run unless
 * `apply`: it then only prints the count and ids it would redrive. Ids that do not exist make it
 * fail (1) before anything is touched. With `apply` it acts on the ids it resolved, so a dead
 * letter arriving between the listing and the redrive is left alone.
 *
 * @example
 * await redriveDeadLetters(transport.deadLetters, { select: { all: true }, apply: true }, output);
 */
export function redriveDeadLetters(
  deadLetters: DeadLetters,
  options: ActOnDeadLettersOptions,
  output: Output,
): Promise<number> {
  return actOn('redrive', deadLetters, options, output);
}

/**
 * Deletes dead letters for good. A dry run unless `apply`, with the same selection rules as
 * `redriveDeadLetters`.
 *
 * @example
 * await purgeDeadLetters(transport.deadLetters, { select: { ids: ['7'] }, apply: true }, output);
 */
export function purgeDeadLetters(
  deadLetters: DeadLetters,
  options: ActOnDeadLettersOptions,
  output: Output,
): Promise<number> {
  return actOn('purge', deadLetters, options, output);
}
