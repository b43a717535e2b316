/** What a request ended as; also the `outcome` label of `onceflow_webhooks_received_total`. */
export type ReceiveOutcome =
  | 'accepted'
  | 'duplicate'
  | 'conflict'
  | 'in-flight'
  | 'unavailable'
  | 'secrets-unavailable'
  | 'draining'
  | 'unauthorized'
  | 'bad-request'
  | 'too-large'
  | 'method-not-allowed'
  | 'timeout'
  | 'overloaded'
  | 'unknown-source'
  | 'handshake'
  | 'error';

/** A framework-neutral answer; the fetch and node adapters only translate it. */
export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly outcome: ReceiveOutcome;
}

const STATUS: Readonly<Record<ReceiveOutcome, number>> = {
  accepted: 202,
  duplicate: 200,
  conflict: 200,
  'in-flight': 503,
  unavailable: 503,
  'secrets-unavailable': 503,
  draining: 503,
  unauthorized: 401,
  'bad-request': 400,
  'too-large': 413,
  'method-not-allowed': 405,
  timeout: 408,
  overloaded: 503,
  'unknown-source': 404,
  handshake: 200,
  error: 500,
};

/** Builds the small JSON answer `{ status, id }` (or `{ status, events }` for several events). */
export function reply(
  outcome: ReceiveOutcome,
  detail: {
    readonly id?: string;
    readonly events?: readonly { id: string; status: ReceiveOutcome }[];
  },
  retryAfterSec: number,
): Reply {
  const status = STATUS[outcome];
  // A fresh object per reply: some runtimes write into the headers they are given
  // (@hono/node-server adds Content-Length to a plain-object init).
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 503) headers['retry-after'] = String(retryAfterSec);
  return { status, headers, outcome, body: replyBody(outcome, detail) };
}

/**
 * `JSON.stringify({ status: outcome, ...detail })`. Without `events` the text is put together
 * directly (an outcome needs no escaping, the id goes through `JSON.stringify`), with no object
 * spread or object serialised per answer.
 */
function replyBody(outcome: ReceiveOutcome, detail: Parameters<typeof reply>[1]): string {
  if (detail.events !== undefined) return JSON.stringify({ status: outcome, ...detail });
  if (detail.id === undefined) return `{"status":"${outcome}"}`;
  return `{"status":"${outcome}","id":${JSON.stringify(detail.id)}}`;
}

/**
 * One answer for several events (Graph batches): 503 if any failed (the sender retries the whole
 * request; the accepted ones are then duplicates), else 202 if any was new, else 200.
 */
export function combine(outcomes: readonly ReceiveOutcome[]): ReceiveOutcome {
  if (outcomes.includes('unavailable')) return 'unavailable';
  if (outcomes.includes('in-flight')) return 'in-flight';
  if (outcomes.includes('accepted')) return 'accepted';
  if (outcomes.includes('conflict')) return 'conflict';
  return 'duplicate';
}
