import type { PrometheusMetrics } from '@onceflow/core';
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
  /** Requests refused with 401 (forged signatures). */
  readonly rejected: number;
  /** Duplicates that caused no work: at the inbox plus at the worker's processed-guard. */
  readonly duplicatesSuppressed: number;
  /** Distinct event ids with a ledger row. */
  readonly processed: number;
  readonly deadLettered: number;
  /** Accepted events with neither a ledger row nor a dead letter. */
  readonly lost: number;
  /** Event ids with more than one ledger row or more than one charge actually made. */
  readonly doubled: number;
  /** Poison events that did not end in the dead-letter store (must be 0). */
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
const mib = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

export async function summarise(input: {
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
  const dead = await stack.transport.deadLetters.list({ limit: 10_000 });
  const deadIds = new Set(dead.map((d) => d.envelope.id));
  let lost = 0;
  for (const id of sent.accepted) if (!rows.has(id) && !deadIds.has(id)) lost++;
  const doubledIds = new Set<string>();
  for (const [id, n] of rows) if (n > 1) doubledIds.add(id);
  for (const [id, n] of payments.chargesByEvent()) if (n > 1) doubledIds.add(id);
  let poisonNotDeadLettered = 0;
  for (const id of sent.poison) if (!deadIds.has(id)) poisonNotDeadLettered++;
  let charges = 0;
  for (const n of payments.chargesByEvent().values()) charges += n;
  return {
    broker: stack.broker,
    received: await sum(metrics.webhooksReceived),
    accepted: sent.accepted.size,
    rejected: sent.statuses.get(401) ?? 0,
    duplicatesSuppressed: (await sum(metrics.duplicatesSuppressed)) + input.workerSuppressed,
    processed: rows.size,
    deadLettered: dead.length,
    lost,
    doubled: doubledIds.size,
    poisonNotDeadLettered,
    workerKills: input.kills,
    chargesMade: charges,
    workerHeapEarlyMiB: mib(median(input.heapSamples.slice(2, 7))),
    workerHeapLateMiB: mib(median(input.heapSamples.slice(-5))),
  };
}
