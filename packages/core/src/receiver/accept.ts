import type { Tracer } from '@opentelemetry/api';
import type { ClaimResult, Inbox } from '../contracts/inbox.js';
import type { Transport } from '../contracts/transport.js';
import type { Envelope } from '../envelope.js';
import { errorLogFields, eventLogFields } from '../observability/event-fields.js';
import type { Logger } from '../observability/logger.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import { publishTraced } from '../observability/trace-publish.js';
import { traceClaim } from '../observability/trace-receipt.js';
import type { ReceiveOutcome } from './reply.js';

export interface AcceptDeps {
  readonly inbox: Inbox;
  readonly transport: Pick<Transport, 'publish'>;
  readonly leaseMs: number;
  readonly logger: Logger;
  readonly metrics?: OnceflowMetrics | undefined;
  /** Claims and publishes get spans under the active (receipt) span. */
  readonly tracer: Tracer;
}

type Claimed = { readonly envelope: Envelope; readonly token: string };

/**
 * Steps 3–5 of the receive path for one verified envelope: `claim`, then for a claim this request
 * now owns `publish` and `markEnqueued`. Never reports `accepted` for what the broker has not
 * confirmed.
 *
 * - inbox throws → `unavailable` (nothing was stored);
 * - publish throws → the claim is released (best effort; if release fails too, the lease runs out
 *   and the relay or the sender's retry takes the claim over) → `unavailable`;
 * - markEnqueued throws after publish resolved → still `accepted`: the message is durable on the
 *   broker. The row stays pending, so the relay publishes it again after its lease; broker dedupe
 *   (same dedupe key) and the worker's processed-guard absorb that second copy, whereas a 503 here
 *   would make the sender retry an event that is already on its way.
 */
export async function acceptOne(deps: AcceptDeps, envelope: Envelope): Promise<ReceiveOutcome> {
  const claim = await claimOf(deps, envelope);
  if (claim instanceof Error || (claim.status !== 'new' && claim.status !== 'stale-pending')) {
    return known(deps, envelope, claim);
  }
  const owned = { envelope, token: claim.token };
  try {
    await publishTraced(deps.tracer, deps.transport, [{ envelope }]);
  } catch (err) {
    deps.logger.error(
      { ...eventLogFields(envelope), ...errorLogFields(err) },
      'publish failed; answering 503',
    );
    await finishClaim(deps, owned, 'release');
    return 'unavailable';
  }
  await finishClaim(deps, owned, 'markEnqueued');
  return 'accepted';
}

/**
 * The same for the several events of one request (Graph): claims in parallel, one `publish` for
 * every claim this request owns, then `markEnqueued` for each. Outcomes in input order.
 */
export async function acceptMany(
  deps: AcceptDeps,
  envelopes: readonly Envelope[],
): Promise<ReceiveOutcome[]> {
  const claims = await Promise.all(envelopes.map((e) => claimOf(deps, e)));
  const outcomes: ReceiveOutcome[] = [];
  const owned: (Claimed & { at: number })[] = [];
  for (const [at, envelope] of envelopes.entries()) {
    const claim = claims[at]!;
    if (claim instanceof Error || (claim.status !== 'new' && claim.status !== 'stale-pending')) {
      outcomes[at] = await known(deps, envelope, claim);
    } else {
      owned.push({ envelope, token: claim.token, at });
    }
  }
  if (owned.length === 0) return outcomes;
  let outcome: ReceiveOutcome = 'accepted';
  try {
    await publishTraced(
      deps.tracer,
      deps.transport,
      owned.map(({ envelope }) => ({ envelope })),
    );
  } catch (err) {
    outcome = 'unavailable';
    const ids = owned.map((c) => c.envelope.id);
    const source = envelopes[0]?.source;
    deps.logger.error({ source, ids, ...errorLogFields(err) }, 'publish failed; answering 503');
  }
  const step = outcome === 'accepted' ? 'markEnqueued' : 'release';
  await Promise.all(owned.map((c) => finishClaim(deps, c, step)));
  for (const { at } of owned) outcomes[at] = outcome;
  return outcomes;
}

/** The claim, or the error the inbox threw (logged here). */
async function claimOf(deps: AcceptDeps, envelope: Envelope): Promise<ClaimResult | Error> {
  try {
    return await traceClaim(deps.tracer, envelope, () =>
      deps.inbox.claim(envelope, { leaseMs: deps.leaseMs }),
    );
  } catch (err) {
    deps.logger.error(
      { ...eventLogFields(envelope), ...errorLogFields(err) },
      'inbox claim failed; answering 503',
    );
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** The outcome of a claim this request does not own: no publish. */
async function known(
  deps: AcceptDeps,
  envelope: Envelope,
  claim: Exclude<ClaimResult, { token: string }> | Error,
): Promise<ReceiveOutcome> {
  if (claim instanceof Error) return 'unavailable';
  switch (claim.status) {
    case 'duplicate':
      deps.metrics?.duplicatesSuppressed.inc({ source: envelope.source, layer: 'inbox' });
      return 'duplicate';
    case 'conflict':
      await noteConflict(deps, envelope, claim.existingHash);
      return 'conflict';
    case 'in-flight':
      return 'in-flight';
  }
}

/** Ends an owned claim with `markEnqueued` or `release`; failures are logged, never thrown (see `acceptOne`). */
async function finishClaim(deps: AcceptDeps, c: Claimed, step: 'markEnqueued' | 'release') {
  try {
    await deps.inbox[step](c.envelope.source, c.envelope.id, c.token);
  } catch (err) {
    deps.logger.warn(
      { ...eventLogFields(c.envelope), ...errorLogFields(err) },
      `inbox ${step} failed; the claim's lease will expire and the relay takes it over`,
    );
  }
}

async function noteConflict(deps: AcceptDeps, envelope: Envelope, existingHash: string) {
  const { source, payloadHash } = envelope;
  deps.metrics?.payloadConflicts.inc({ source });
  deps.logger.warn(
    { ...eventLogFields(envelope), payloadHash, existingHash },
    'payload conflict: the sender reused an event id with other bytes; not published',
  );
  try {
    await deps.inbox.recordConflict(envelope);
  } catch (err) {
    deps.logger.warn(
      { ...eventLogFields(envelope), ...errorLogFields(err) },
      'inbox recordConflict failed',
    );
  }
}
