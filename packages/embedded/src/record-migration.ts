import { HISTORY_LIMIT } from '@onceflow/core';
import { appendHistory } from './history.js';

/** A W3C `traceparent` (`<version>-<32 hex trace id>-<parent id>-<flags>`), as `traceIdOf` reads it. */
const TRACE_ID_GLOB = `${'[0-9a-f]'.repeat(32)}-*`;

/**
 * The event record's columns from schema version 2 on (version 5 keeps them in a rowid table).
 * Large columns come last (`history`, `envelope`), so the lease checks never read overflow pages.
 */
export const RECORD_COLUMNS = `
    source TEXT NOT NULL,
    id TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('received', 'enqueued', 'processing',
      'retry-scheduled', 'completed', 'dead-lettered', 'discarded')),
    processing_token TEXT,          -- the attempt holding the processing lease (state processing)
    processing_expires_at INTEGER,
    claim_token TEXT,               -- the receiver's claim, until markEnqueued or release
    claim_expires_at INTEGER,
    claimed_at INTEGER,
    payload_hash TEXT,              -- the receiver's claim; NULL for events that never passed one
    received_at INTEGER NOT NULL,   -- ms since epoch; retention is measured on it
    updated_at INTEGER NOT NULL,    -- ms since epoch of the last state change
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    type TEXT,
    ordering_key TEXT,
    consumer TEXT,
    trace_id TEXT,
    reason TEXT,
    last_error TEXT,                -- JSON ErrorInfo
    history TEXT NOT NULL DEFAULT '[]', -- JSON array of HistoryEntry, oldest first, at most ${HISTORY_LIMIT}
    envelope TEXT,                  -- wire format v1: the claimed event, or a dead letter's
`;

/** The event record's indexes from schema version 2 on, on `onceflow_inbox`. */
export const RECORD_INDEXES = `
  CREATE INDEX onceflow_inbox_pending ON onceflow_inbox (claimed_at) WHERE state = 'received';
  CREATE INDEX onceflow_inbox_received ON onceflow_inbox (received_at);
  -- Dead letters are browsed oldest first, ties by (source, id): RecordPage order.
  CREATE INDEX onceflow_inbox_dead_letters ON onceflow_inbox (updated_at, source, id)
    WHERE state = 'dead-lettered';
`;

/**
 * Schema version 2: `onceflow_inbox` becomes the event record. SQLite cannot change a column's
 * CHECK, so the table is rebuilt in the migration's transaction (time linear in its rows, under
 * the write lock: other processes wait up to their busy timeout). Existing rows map onto the
 * record's states: processed → `completed`; holding a processing lease → `processing` (a lease
 * that ran out is taken by the next delivery, as before); pending → `received`; the rest
 * (enqueued, or seen by the processed-guard only) → `enqueued`. Each migrated row gets one history
 * entry, noted `migrated`, at its last known change. The transport's dead letters
 * (`onceflow_dead_letters`, gone with this version) become `dead-lettered` records with their
 * envelope, reason, attempts and last error, except over a `completed` record.
 */
export const RECORD_MIGRATION = `
  CREATE TABLE onceflow_inbox_v2 (
${RECORD_COLUMNS}    PRIMARY KEY (source, id)
  ) WITHOUT ROWID;

  INSERT INTO onceflow_inbox_v2 (source, id, state, processing_token, processing_expires_at,
    claim_token, claim_expires_at, claimed_at, payload_hash, received_at, updated_at, type,
    ordering_key, trace_id, history, envelope)
  SELECT source, id, next_state,
    CASE WHEN next_state = 'processing' THEN processing_token END,
    CASE WHEN next_state = 'processing' THEN processing_expires_at END,
    claim_token, claim_expires_at, claimed_at, payload_hash, received_at, changed_at,
    json_extract(doc, '$.type'), json_extract(doc, '$.key'),
    CASE WHEN length(tp) - length(replace(tp, '-', '')) = 3
      AND substr(tp, instr(tp, '-') + 1) GLOB '${TRACE_ID_GLOB}'
      THEN substr(tp, instr(tp, '-') + 1, 32) END,
    json_array(json_object(
      'at', strftime('%Y-%m-%dT%H:%M:%fZ', changed_at / 1000.0, 'unixepoch'),
      'state', next_state, 'note', 'migrated')),
    envelope
  FROM (
    SELECT *, json_extract(doc, '$.headers.traceparent') AS tp
    FROM (
      SELECT *,
        CASE WHEN processed_at IS NOT NULL THEN 'completed'
             WHEN processing_token IS NOT NULL THEN 'processing'
             WHEN state = 'pending' THEN 'received'
             ELSE 'enqueued' END AS next_state,
        coalesce(processed_at, enqueued_at, claimed_at, received_at) AS changed_at,
        CASE WHEN json_valid(envelope) THEN envelope END AS doc
      FROM onceflow_inbox));

  INSERT INTO onceflow_inbox_v2 (source, id, state, received_at, updated_at, attempts, type,
    ordering_key, reason, last_error, history, envelope)
  SELECT json_extract(envelope, '$.source'), json_extract(envelope, '$.id'), 'dead-lettered',
    coalesce(CAST(round(unixepoch(json_extract(envelope, '$.receivedAt'), 'subsec') * 1000)
      AS INTEGER), dead_lettered_at),
    dead_lettered_at, attempts, json_extract(envelope, '$.type'), json_extract(envelope, '$.key'),
    reason, last_error,
    json_array(json_patch(json_object(
      'at', strftime('%Y-%m-%dT%H:%M:%fZ', dead_lettered_at / 1000.0, 'unixepoch'),
      'state', 'dead-lettered', 'attempt', attempts),
      json_object('code', json_extract(last_error, '$.code'),
        'note', 'migrated from the dead letters of queue ' || queue))),
    envelope
  FROM onceflow_dead_letters
  WHERE json_valid(envelope) AND json_extract(envelope, '$.source') IS NOT NULL
    AND json_extract(envelope, '$.id') IS NOT NULL
  ORDER BY id
  ON CONFLICT (source, id) DO UPDATE SET state = 'dead-lettered', processing_token = NULL,
    processing_expires_at = NULL, updated_at = excluded.updated_at, attempts = excluded.attempts,
    reason = excluded.reason, last_error = excluded.last_error, envelope = excluded.envelope,
    history = ${appendHistory(`json_extract(excluded.history, '$[0]')`)}
  WHERE state != 'completed';

  DROP TABLE onceflow_dead_letters;
  DROP TABLE onceflow_inbox;
  ALTER TABLE onceflow_inbox_v2 RENAME TO onceflow_inbox;
${RECORD_INDEXES}`;
