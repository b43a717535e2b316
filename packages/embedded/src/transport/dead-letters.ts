import type { DeadLetter, DeadLetters } from '@onceflow/core';
import { decodeEnvelope, parseErrorInfo } from '@onceflow/core/kit';
import type { DatabaseHandle } from '../database.js';
import { asTransport } from '../errors.js';

interface DeadLetterRow {
  id: number;
  dedupe_key: string;
  envelope: string;
  reason: string;
  attempts: number;
  last_error: string | null;
  dead_lettered_at: number;
}

function toDeadLetter(row: DeadLetterRow): DeadLetter {
  return {
    id: String(row.id),
    envelope: decodeEnvelope(row.envelope),
    reason: row.reason,
    attempts: row.attempts,
    lastError: parseErrorInfo(row.last_error ?? undefined),
    deadLetteredAt: new Date(row.dead_lettered_at).toISOString(),
  };
}

/** `ids` as a JSON array of integers for `json_each`, or null for "all". Non-numeric ids match nothing. */
const idList = (ids?: readonly string[]): string | null =>
  ids === undefined ? null : JSON.stringify(ids.map(Number).filter(Number.isSafeInteger));

const SELECTED = `queue = ? AND (? IS NULL OR id IN (SELECT value FROM json_each(?)))`;

/**
 * One queue's dead-letter table. `redrive` republishes each message under its original dedupe key
 * at the tail of the queue with `attempt` starting again at 1 (its dedupe tombstone is replaced)
 * and deletes the dead letter, in one transaction; if a live message with that key is queued
 * already, the dead letter is just deleted. Safe to call from several processes at once.
 */
export function createDeadLetters(
  handle: DatabaseHandle,
  queue: string,
  onRedrive: () => void = () => {},
): DeadLetters {
  const select = (ids?: readonly string[]): DeadLetterRow[] => {
    const list = idList(ids);
    return handle
      .stmt(`SELECT * FROM onceflow_dead_letters WHERE ${SELECTED} ORDER BY id`)
      .all(queue, list, list) as DeadLetterRow[];
  };

  const redrive = (ids?: readonly string[]): number =>
    handle.immediate(() => {
      const now = Date.now();
      const rows = select(ids);
      for (const row of rows) {
        handle
          .stmt(
            `DELETE FROM onceflow_messages WHERE queue = ? AND dedupe_key = ? AND state = 'done'`,
          )
          .run(queue, row.dedupe_key);
        handle
          .stmt(
            `INSERT INTO onceflow_messages
               (queue, dedupe_key, ordering_key, envelope, state, visible_at, published_at)
             VALUES (?, ?, ?, ?, 'queued', ?, ?) ON CONFLICT (queue, dedupe_key) DO NOTHING`,
          )
          .run(
            queue,
            row.dedupe_key,
            decodeEnvelope(row.envelope).key ?? null,
            row.envelope,
            now,
            now,
          );
        handle.stmt('DELETE FROM onceflow_dead_letters WHERE id = ?').run(row.id);
      }
      return rows.length;
    });

  return {
    list: (options) =>
      asTransport('deadLetters.list', () =>
        (
          handle
            .stmt('SELECT * FROM onceflow_dead_letters WHERE queue = ? ORDER BY id LIMIT ?')
            .all(queue, options?.limit ?? -1) as DeadLetterRow[]
        ).map(toDeadLetter),
      ),
    get: (id) =>
      asTransport('deadLetters.get', () => {
        const row = select([id])[0];
        return row === undefined ? undefined : toDeadLetter(row);
      }),
    redrive: async (ids) => {
      const n = await asTransport('deadLetters.redrive', () => redrive(ids));
      if (n > 0) onRedrive();
      return n;
    },
    purge: (ids) =>
      asTransport('deadLetters.purge', () => {
        const list = idList(ids);
        return handle
          .stmt(`DELETE FROM onceflow_dead_letters WHERE ${SELECTED}`)
          .run(queue, list, list).changes;
      }),
    count: () =>
      asTransport('deadLetters.count', () => {
        const row = handle
          .stmt('SELECT count(*) AS n FROM onceflow_dead_letters WHERE queue = ?')
          .get(queue) as { n: number };
        return row.n;
      }),
  };
}
