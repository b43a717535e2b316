import { randomUUID } from 'node:crypto';
import type { ClaimResult, Envelope, EventState } from '@onceflow/core';
import { encodeEnvelope, positiveMs } from '@onceflow/core/kit';
import { exec, type Queryable } from './exec.js';
import type { HotPath } from './hot-path.js';
import { envelopeFields } from './record-row.js';
import type { InboxStatements } from './statements.js';

/** Rounds of insert-then-inspect before giving up with `in-flight` (the row kept vanishing). */
const MAX_ROUNDS = 3;

interface ExistingRow {
  state: EventState;
  payload_hash: string | null;
  taken: boolean;
}

/**
 * `Inbox.claim`: one insert (`INSERT … ON CONFLICT DO NOTHING`, alone or in a batch) for a first
 * sight. On conflict a second statement reads the row and, atomically, takes over a received
 * claim whose lease ran out (same payload hash only). A row deleted between the two (released,
 * purged) sends us round again. A record no receiver claimed (a worker's or a dead letter's, no
 * hash) is a `duplicate`: the event is already known.
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
  const [type, key, traceId, receivedAt] = envelopeFields(envelope);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const token = randomUUID();
    const row = {
      source,
      id,
      payloadHash,
      encoded,
      receivedAt,
      token,
      leaseMs,
      type,
      key,
      traceId,
    };
    const inserted = await hot.insertClaim(row);
    if (inserted === 'inserted') return { status: 'new', token };
    if (inserted !== 'exists') return inserted;

    const existing = await exec<ExistingRow>(
      db,
      sql.claimExisting,
      [source, id, payloadHash, token, leaseMs],
      'claim',
    );
    const found = existing.rows[0];
    if (found === undefined) continue;
    if (found.taken) return { status: 'stale-pending', token };
    if (found.payload_hash === null) return { status: 'duplicate' };
    if (found.payload_hash !== payloadHash) {
      return { status: 'conflict', existingHash: found.payload_hash };
    }
    // Not taken although received: a live lease, or another request took it a moment ago
    // (the UPDATE saw the newer row version); the sender's retry will tell.
    return found.state === 'received' ? { status: 'in-flight' } : { status: 'duplicate' };
  }
  return { status: 'in-flight' };
}
