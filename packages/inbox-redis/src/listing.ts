import type { RecordFilter, RecordPage, RecordStore } from '@onceflow/core';
import { UsageError } from '@onceflow/core';
import {
  decodeCursor,
  decodeEnvelope,
  encodeCursor,
  isAfter,
  pageSize,
  type RecordCursor,
} from '@onceflow/core/kit';
import type { Call } from './call.js';
import type { InboxCommands } from './commands.js';
import type { InboxKeys } from './keys.js';
import { KEPT_STATES, RECORD_FIELDS, STATE_LETTERS, type StateLetter } from './lua/row.js';
import { letterOf, type RowFields, toRecord } from './record-row.js';

type Deps = {
  readonly call: Call;
  readonly scripts: InboxCommands;
  readonly keys: InboxKeys;
  readonly retentionMs: number;
};

/** One index entry with its row, as `LIST_BATCH` returned it. */
interface Entry {
  readonly updatedAt: number;
  readonly source: string;
  readonly id: string;
  readonly fields: RowFields;
}

/** Index entries a batch reads when filters beyond state and age may pass over many. */
const FILTERED_BATCH = 500;
const ALL_LETTERS = Object.values(STATE_LETTERS);
const STRIDE = 2 + RECORD_FIELDS.length;

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Page order: oldest updatedAt first, ties by (source, id). */
const pageOrder = (a: Entry, b: Entry) =>
  a.updatedAt - b.updatedAt || compare(a.source, b.source) || compare(a.id, b.id);

function timeOf(name: string, date: Date | undefined): number | undefined {
  if (date === undefined) return undefined;
  const at = date.getTime();
  if (Number.isNaN(at)) throw new UsageError(`${name} is not a date`);
  return at;
}

/** Whether the filters an index does not answer (source, type, reason) let `entry` through. */
function passes(filter: RecordFilter, entry: Entry): boolean {
  if (filter.source !== undefined && entry.source !== filter.source) return false;
  if (filter.type !== undefined && (entry.fields.ty ?? undefined) !== filter.type) return false;
  if (filter.reason !== undefined && !(entry.fields.rs ?? '').includes(filter.reason)) return false;
  return true;
}

/**
 * `get`, `list` and `count`. Listing reads the state indexes (`pending`, `s:<letter>`, scored by
 * updatedAt) from the cursor on, merged in page order when no state is asked for, and applies the
 * other filters to the rows it reads on the way, so a page costs one script per index batch.
 * Ties in updatedAt are ordered here, not by Redis: a batch always holds whole runs of equal
 * scores, so the keyset cursor (updatedAt, source, id) never skips or repeats a record.
 */
export function createListing({
  call,
  scripts,
  keys,
  retentionMs,
}: Deps): Pick<RecordStore, 'get' | 'list' | 'count'> {
  const retentionOf = (letter: StateLetter) => (KEPT_STATES.includes(letter) ? 0 : retentionMs);

  /** Reads one state index in page order, from `lo` (inclusive) to `hi` (exclusive). */
  function indexReader(
    letter: StateLetter,
    lo: number | '-inf',
    hi: number | '+inf',
    batch: number,
  ) {
    let buffer: Entry[] = [];
    let at = 0;
    let exhausted = false;
    let next: { score: string; open: boolean } = { score: String(lo), open: false };
    return {
      async peek(): Promise<Entry | undefined> {
        while (at >= buffer.length && !exhausted) {
          const { score, open } = next;
          const reply = await call('list', () =>
            scripts.listBatch(
              keys.stateIndex(letter),
              keys.base,
              letter,
              score,
              open ? 1 : 0,
              hi,
              batch,
              retentionOf(letter),
            ),
          );
          const entries: Entry[] = [];
          for (let i = 2; i + STRIDE <= reply.length; i += STRIDE) {
            const fields: Record<string, string | null> = {};
            RECORD_FIELDS.forEach((name, j) => {
              const v = reply[i + 2 + j];
              fields[name] = v === null || v === undefined ? null : String(v);
            });
            entries.push({
              ...keys.parseMember(String(reply[i])),
              updatedAt: Number(reply[i + 1]),
              fields,
            });
          }
          buffer = entries.sort(pageOrder);
          at = 0;
          exhausted = Number(reply[1]) === 1;
          next = { score: String(reply[0]), open: true };
        }
        return buffer[at];
      },
      shift() {
        at++;
      },
    };
  }

  /** Records matching `filter` after `cursor`, in page order. */
  async function* scan(filter: RecordFilter, cursor: RecordCursor | undefined, batch: number) {
    const letters = filter.state === undefined ? ALL_LETTERS : [letterOf(filter.state)];
    const after = timeOf('updatedAfter', filter.updatedAfter);
    const before = timeOf('updatedBefore', filter.updatedBefore);
    const lows = [after, cursor?.updatedAt].filter((t) => t !== undefined);
    const lo = lows.length === 0 ? '-inf' : Math.max(...lows);
    const readers = letters.map((l) => indexReader(l, lo, before ?? '+inf', batch));
    for (;;) {
      const heads = await Promise.all(readers.map((r) => r.peek()));
      let best: number | undefined;
      heads.forEach((head, i) => {
        const current = best === undefined ? undefined : heads[best];
        if (head && (current === undefined || pageOrder(head, current) < 0)) best = i;
      });
      const entry = best === undefined ? undefined : heads[best];
      if (best === undefined || entry === undefined) return;
      readers[best]?.shift();
      if (cursor && !isAfter(cursor, entry.updatedAt, entry.source, entry.id)) continue;
      if (passes(filter, entry)) yield entry;
    }
  }

  const filtered = (f: RecordFilter) =>
    f.source !== undefined || f.type !== undefined || f.reason !== undefined;

  return {
    async get(source, id) {
      const member = keys.member(source, id);
      const [envelope, ...pairs] = await call('get', () =>
        scripts.read(keys.row(member), keys.envelope(member)),
      );
      if (pairs.length === 0) return undefined;
      const fields: Record<string, string | null> = {};
      for (let i = 0; i + 1 < pairs.length; i += 2) fields[String(pairs[i])] = pairs[i + 1] ?? null;
      const record = toRecord(source, id, fields);
      return envelope ? { ...record, envelope: decodeEnvelope(envelope) } : record;
    },

    async list(query): Promise<RecordPage> {
      const limit = pageSize(query.limit);
      const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const batch = filtered(query) ? FILTERED_BATCH : Math.min(FILTERED_BATCH, limit + 1);
      const found: Entry[] = [];
      for await (const entry of scan(query, cursor, batch)) {
        found.push(entry);
        if (found.length > limit) break;
      }
      const page = found.slice(0, limit);
      const last = page.at(-1);
      return {
        records: page.map((e) => toRecord(e.source, e.id, e.fields)),
        next:
          found.length > limit && last
            ? encodeCursor({ updatedAt: last.updatedAt, source: last.source, id: last.id })
            : undefined,
      };
    },

    async count(filter) {
      if (filtered(filter)) {
        let n = 0;
        for await (const _ of scan(filter, undefined, FILTERED_BATCH)) n++;
        return n;
      }
      const letters = filter.state === undefined ? ALL_LETTERS : [letterOf(filter.state)];
      const after = timeOf('updatedAfter', filter.updatedAfter);
      const before = timeOf('updatedBefore', filter.updatedBefore);
      const n = await call('count', () =>
        scripts.count(
          letters.length,
          ...letters.map((l) => keys.stateIndex(l)),
          after ?? '-inf',
          before ?? '+inf',
          ...letters.map(retentionOf),
        ),
      );
      return Number(n);
    },
  };
}
