import type { ErrorCode, EventRecord, EventState, HistoryEntry } from '@onceflow/core';
import { HISTORY_LIMIT, UsageError } from '@onceflow/core';
import { STATE_LETTERS, type StateLetter } from './lua/row.js';

/** A row's fields as Redis returned them (`HGETALL`, or `RECORD_FIELDS` zipped with `HMGET`). */
export type RowFields = Readonly<Record<string, string | null | undefined>>;

const STATE_OF = Object.fromEntries(
  Object.entries(STATE_LETTERS).map(([state, letter]) => [letter, state]),
) as Record<StateLetter, EventState>;

/** The letter of `state`; `UsageError` for anything that is not an `EventState`. */
export function letterOf(state: EventState): StateLetter {
  const letter = (STATE_LETTERS as Record<string, StateLetter | undefined>)[state];
  if (letter === undefined) throw new UsageError(`not an event state: ${JSON.stringify(state)}`);
  return letter;
}

const stateOf = (letter: string | null | undefined): EventState =>
  STATE_OF[letter as StateLetter] ?? 'enqueued';

const iso = (ms: number) => new Date(ms).toISOString();
const text = (v: string | null | undefined) => (v === null || v === '' ? undefined : v);
const ms = (v: string | null | undefined) => (text(v) === undefined ? undefined : Number(v));

/** One `y<i>` field: `[at ms, state letter, attempt, code, actor, note]`, trailing blanks dropped. */
function historyEntry(raw: string): HistoryEntry {
  const [at, letter, attempt, code, actor, note] = JSON.parse(raw) as [
    number,
    string,
    number?,
    string?,
    string?,
    string?,
  ];
  const entry: { -readonly [K in keyof HistoryEntry]: HistoryEntry[K] } = {
    at: iso(at),
    state: stateOf(letter),
  };
  if (attempt) entry.attempt = attempt;
  if (code) entry.code = code;
  if (actor) entry.actor = actor;
  if (note) entry.note = note;
  return entry;
}

/** The ring of history fields, oldest first. */
function historyOf(fields: RowFields): HistoryEntry[] {
  const written = Number(fields.yn ?? 0);
  const entries: HistoryEntry[] = [];
  for (let i = Math.max(0, written - HISTORY_LIMIT); i < written; i++) {
    const raw = fields[`y${i % HISTORY_LIMIT}`];
    if (raw) entries.push(historyEntry(raw));
  }
  return entries;
}

/** The record of (source, id) from its row's fields. */
export function toRecord(source: string, id: string, fields: RowFields): EventRecord {
  const updatedAt = ms(fields.u) ?? ms(fields.ra) ?? 0;
  const nextAttemptAt = ms(fields.na);
  return {
    source,
    id,
    type: text(fields.ty),
    key: text(fields.k),
    state: stateOf(fields.s),
    attempts: Number(fields.n ?? 0),
    nextAttemptAt: nextAttemptAt === undefined ? undefined : iso(nextAttemptAt),
    lastError: fields.ec
      ? { code: fields.ec as ErrorCode, name: fields.en ?? '', message: fields.em ?? '' }
      : undefined,
    reason: text(fields.rs),
    consumer: text(fields.cn),
    traceId: text(fields.ti),
    receivedAt: iso(ms(fields.ra) ?? updatedAt),
    updatedAt: iso(updatedAt),
    history: historyOf(fields),
  };
}
