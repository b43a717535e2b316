import type { EventState, PrometheusMetrics, RecordStore } from '@onceflow/core';
import { recordedEventId } from './handlers.js';
import type { PaymentsApi } from './payments.js';
import type { SendReport } from './sender.js';
import type { Stack } from './stack.js';

/** What the demo proves, as numbers. `lost` and `doubled` must be 0. */
export interface Summary {
  readonly broker: string;
  /** Webhook requests the receiver answered (duplicates, forgeries and retries included). */
  readonly received: number;
  /** Distinct event ids answered with a 2xx. */
  readonly accepted: number;
  /** Events the sender gave up on: no 2xx within its retry horizon (the answers are in `statuses`). */
  readonly notAccepted: number;
  /** Answers to the sender, by status code. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Requests refused with 401 (forged signatures). */
  readonly rejected: number;
  /** Duplicates that caused no work: at the inbox plus at the worker's guard on the record. */
  readonly duplicatesSuppressed: number;
  /** Accepted events the event record says completed. */
  readonly processed: number;
  /** Outbound `payment.recorded` events (from the outbox) the event record says completed (0 with the step off). */
  readonly outboundProcessed: number;
  /**
   * Charged payments whose outbound event is not completed with its ledger row (must be 0). Their
   * ledger rows count in `doubled` like every event's.
   */
  readonly outboundLost: number;
  /** Events the event record holds as dead letters. */
  readonly deadLettered: number;
  /** Accepted events the record holds neither completed nor dead-lettered. */
  readonly lost: number;
  /** Event ids with more than one ledger row or more than one charge actually made. */
  readonly doubled: number;
  /** Poison events the record does not hold as dead letters (must be 0). */
  readonly poisonNotDeadLettered: number;
  readonly workerKills: number;
  readonly chargesMade: number;
  /** Live heap of the last worker process (after GC), early in its run and at the end, in MiB. */
  readonly workerHeapEarlyMiB: number;
  readonly workerHeapLateMiB: number;
}

const sum = async (
  c: { get(): Promise<{ values: { value: number; labels: Record<string, string | number> }[] }> },
  filter?: (l: Record<string, string | number>) => boolean,
): Promise<number> =>
  (await c.get()).values
    .filter((v) => !filter || filter(v.labels))
    .reduce((n, v) => n + v.value, 0);

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};
/** The event ids of every record in `state`, read page by page from the event record. */
export async function idsInState(records: RecordStore, state: EventState): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await records.list({ state, limit: 1000, cursor });
    for (const r of page.records) ids.add(r.id);
    cursor = page.next;
  } while (cursor !== undefined);
  return ids;
}

const mib = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

export async function summarise(input: {
  outbound: boolean;
  sent: SendReport;
  stack: Stack;
  metrics: PrometheusMetrics;
  payments: PaymentsApi;
  workerSuppressed: number;
  kills: number;
  heapSamples: readonly number[];
}): Promise<Summary> {
  const { sent, stack, metrics, payments } = input;
  const rows = await stack.ledger.rowsByEvent();
  const completed = await idsInState(stack.records, 'completed');
  const deadIds = await idsInState(stack.records, 'dead-lettered');
  let lost = 0;
  for (const id of sent.accepted) if (!completed.has(id) && !deadIds.has(id)) lost++;
  // The record and the ledger must agree: a completed event without its ledger row is lost too.
  for (const id of completed) if (sent.accepted.has(id) && !rows.has(id)) lost++;
  const doubledIds = new Set<string>();
  for (const [id, n] of rows) if (n > 1) doubledIds.add(id);
  for (const [id, n] of payments.chargesByEvent()) if (n > 1) doubledIds.add(id);
  let outboundLost = 0;
  let outboundProcessed = 0;
  for (const payment of input.outbound ? payments.chargesByEvent().keys() : []) {
    const id = recordedEventId(payment);
    if (completed.has(id)) outboundProcessed++;
    if (!completed.has(id) || !rows.has(id)) outboundLost++;
  }
  let poisonNotDeadLettered = 0;
  for (const id of sent.poison) if (!deadIds.has(id)) poisonNotDeadLettered++;
  let charges = 0;
  for (const n of payments.chargesByEvent().values()) charges += n;
  return {
    broker: stack.broker,
    received: await sum(metrics.webhooksReceived),
    accepted: sent.accepted.size,
    notAccepted: sent.gaveUp.size,
    statuses: Object.fromEntries(sent.statuses),
    rejected: sent.statuses.get(401) ?? 0,
    duplicatesSuppressed: (await sum(metrics.duplicatesSuppressed)) + input.workerSuppressed,
    processed: [...completed].filter((id) => sent.accepted.has(id)).length,
    outboundProcessed,
    outboundLost,
    deadLettered: deadIds.size,
    lost,
    doubled: doubledIds.size,
    poisonNotDeadLettered,
    workerKills: input.kills,
    chargesMade: charges,
    workerHeapEarlyMiB: mib(median(input.heapSamples.slice(2, 7))),
    workerHeapLateMiB: mib(median(input.heapSamples.slice(-5))),
  };
}
