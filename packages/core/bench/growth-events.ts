import { randomBytes } from 'node:crypto';
import { createEnvelope, type Envelope } from '@onceflow/core';
import { encodeEnvelope } from '@onceflow/core/kit';
import type { LoadResult } from './load.js';

/**
 * What the benches of a store as it grows share: the events a receiver claims, and the shape of
 * the rows they fill a store with in SQL (so the filled rows weigh what claimed ones do).
 */

/** Retention spans four days of events; purge removes the oldest. */
export const DAY_MS = 86_400_000;
export const SPAN_MS = 4 * DAY_MS;

/** A fresh event with a random id (as senders' ids are), about `payloadBytes` of payload. */
export function freshEvent(payloadBytes: number): Envelope {
  const id = `evt_${randomBytes(12).toString('base64url')}`;
  return createEnvelope({
    source: 'stripe',
    id,
    type: 'charge.succeeded',
    key: `cus_${id.slice(4, 6)}`,
    payload: { id, data: { amount: 4200, filler: filler(payloadBytes) } },
    headers: { traceparent: `00-${randomBytes(16).toString('hex')}-${'1'.repeat(16)}-01` },
  });
}

const fillers = new Map<number, string>();
const filler = (bytes: number): string => {
  let f = fillers.get(bytes);
  if (f === undefined) {
    f = randomBytes(Math.max(0, Math.floor(bytes / 2) - 20)).toString('hex');
    fillers.set(bytes, f);
  }
  return f;
};

/** An encoded envelope whose id is `evt_ID`, for SQL to `replace` with each row's id. */
export const envelopeTemplate = (payloadBytes: number): string =>
  encodeEnvelope({ ...freshEvent(payloadBytes), id: 'evt_ID' });

/** History arrays (JSON) as a record holds them once received, enqueued and completed. */
export function retainedHistories(): { received: string; enqueued: string; completed: string } {
  const at = '2026-01-01T00:00:00.000Z';
  const entry = (state: string, extra: object = {}) => ({ at, state, ...extra });
  const received = [entry('received', { actor: 'receiver' })];
  const enqueued = [...received, entry('enqueued', { actor: 'receiver' })];
  const completed = [
    ...enqueued,
    entry('processing', { attempt: 1, actor: 'worker-1' }),
    entry('completed', { attempt: 1, actor: 'worker-1' }),
  ];
  return {
    received: JSON.stringify(received),
    enqueued: JSON.stringify(enqueued),
    completed: JSON.stringify(completed),
  };
}

/** `1M`, `250k`: a row count as the tables print it. */
export const countLabel = (n: number): string =>
  n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n);

export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** One line: `round 1 full   1,050/s  p50 5.26 ms  p99 37.94 ms`. */
export const pacedLine = (name: string, r: LoadResult): string =>
  `${name.padEnd(26)} ${Math.round(r.rps).toLocaleString('en').padStart(6)}/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms${r.errors ? `  ${r.errors} errors` : ''}`;
