import { randomUUID } from 'node:crypto';
import type { ClaimResult, Envelope } from '@onceflow/core';
import { encodeEnvelope, positiveMs } from '@onceflow/core/kit';
import { exec, type Queryable } from './exec.js';
import type { HotPath } from './hot-path.js';
import type { InboxStatements } from './statements.js';

/** Rounds of insert-then-inspect before giving up with `in-flight` (the row kept vanishing). */
const MAX_ROUNDS = 3;

interface ExistingRow {
  state: 'pending' | 'enqueued' | 'processed';
  payload_hash: string | null;
  taken: boolean;
}

function receivedAt(envelope: Envelope): Date {
  const at = new Date(envelope.receivedAt);
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

/**
 * `Inbox.claim`: one insert (`INSERT … ON CONFLICT DO NOTHING`, alone or in a batch) for a first
 * sight. On conflict a second statement reads the row and, atomically, takes over a pending claim
 * whose lease ran out (same payload hash only). A row deleted between the two (released, purged)
 * sends us round again. A row the processed-guard created for an event no receiver claimed yet (no
 * hash) is taken as `new` unless it is processed (`duplicate`), as if the guard's row were not there.
 */
export async function claim(
  db: Queryable,
  sql: InboxStatements,
  hot: HotPath,
  envelope: Envelope,
  leaseMs: number,
): Promise<ClaimResult> {
  positiveMs('leaseMs', leaseMs);
  const { source, id, payloadHash } = envelope;
  const encoded = encodeEnvelope(envelope);
  const at = receivedAt(envelope);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const token = randomUUID();
    const row = { source, id, payloadHash, encoded, receivedAt: at, token, leaseMs };
    const inserted = await hot.insertClaim(row);
    if (inserted === 'inserted') return { status: 'new', token };
    if (inserted !== 'exists') return inserted;

    const existing = await exec<ExistingRow>(
      db,
      sql.claimExisting,
      [source, id, payloadHash, token, leaseMs, encoded],
      'claim',
    );
    const found = existing.rows[0];
    if (found === undefined) continue;
    if (found.taken)
      return { status: found.payload_hash === null ? 'new' : 'stale-pending', token };
    if (found.payload_hash !== null && found.payload_hash !== payloadHash) {
      return { status: 'conflict', existingHash: found.payload_hash };
    }
    // Not taken although pending (or unclaimed): a live lease, or another request took it a
    // moment ago (the UPDATE saw the newer row version); the sender's retry will tell.
    const busy =
      found.state === 'pending' || (found.payload_hash === null && found.state !== 'processed');
    return busy ? { status: 'in-flight' } : { status: 'duplicate' };
  }
  return { status: 'in-flight' };
}
