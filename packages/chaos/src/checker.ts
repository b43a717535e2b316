import type { EventRecord, RecordStore } from '@onceflow/core';
import type { BrokerDefect } from './broker-defects.js';
import type { HandlerMode, LedgerRow } from './stack.js';

/** The checker's verdict on one run, after Jepsen's: counts read from the ledger and the record. */
export interface Summary {
  readonly stack: string;
  readonly mode: HandlerMode;
  readonly seed: number;
  readonly events: number;
  readonly requests: number;
  readonly accepted: number;
  /** Accepted ids with at least one ledger row. */
  readonly processed: number;
  /**
   * Accepted ids with no ledger row, but for those the broker lost (`brokerLost`): onceflow's
   * losses.
   */
  readonly lost: number;
  /**
   * Accepted ids with no ledger row accepted after the broker stopped keeping what it
   * acknowledged (`brokerDefects`): lost with the broker, counted apart. 0 without a defect.
   */
  readonly brokerLost: number;
  /** Where the harness's broker broke its own guarantee during the run, from its log. */
  readonly brokerDefects: readonly string[];
  /** Ids with more than one ledger row, and the extra rows. */
  readonly doubled: number;
  readonly extraRows: number;
  /** Ledger rows for ids the sender never saw accepted. */
  readonly unexpected: number;
  /** Forged deliveries answered 2xx. */
  readonly forgedAccepted: number;
  /** Ids the sender gave up on (never a 2xx). */
  readonly gaveUp: number;
  /** Up to five ids the sender gave up on, with their last answers. */
  readonly gaveUpSample: readonly string[];
  /**
   * What the event record says of the lost events: how many are in each state (`none`: no
   * record at all). Empty when nothing was lost.
   */
  readonly lostStates: Readonly<Record<string, number>>;
  /**
   * Up to five lost ids (onceflow's first, then the broker's) with their record's history
   * (`state@time by actor`), to start from.
   */
  readonly lostSample: readonly string[];
  /** Handler starts beyond the first, per processed event (from the event record's history). */
  readonly redeliveryRate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly faults: readonly string[];
  readonly statuses: Readonly<Record<string, number>>;
  /** With a PostgreSQL restart: the receivers' answers while it was down. */
  readonly outageAnswers?: Readonly<Record<string, number>> | undefined;
  /**
   * HTTP answers other than 503 and 2xx while PostgreSQL was down (a 2xx is right for an event
   * whose claim was stored and published before it went down).
   */
  readonly outageMisanswers: number;
  readonly durationMs: number;
  /** ms spent in each phase of the run (start, send, replayWithin, drain, ...), in order. */
  readonly phasesMs?: Readonly<Record<string, number>> | undefined;
  /** lost > 0, forged or unexpected rows, outage misanswers, or (helper mode) doubled > 0. */
  readonly failed: boolean;
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);

/** The records of `ids`, 25 reads at a time. */
async function recordsOf(records: RecordStore, ids: readonly string[]) {
  const out: (EventRecord | undefined)[] = [];
  for (let i = 0; i < ids.length; i += 25)
    out.push(...(await Promise.all(ids.slice(i, i + 25).map((id) => records.get('stripe', id)))));
  return out;
}

/** The lost events' record states, counted, and a sample with each one's history. */
async function lostDetail(
  records: RecordStore,
  lost: ReadonlyMap<string, number>,
): Promise<Pick<Summary, 'lostStates' | 'lostSample'>> {
  const ids = [...lost.keys()];
  const found = await recordsOf(records, ids);
  const lostStates: Record<string, number> = {};
  for (const r of found) lostStates[r?.state ?? 'none'] = (lostStates[r?.state ?? 'none'] ?? 0) + 1;
  const lostSample = ids.slice(0, 5).map((id, i) => {
    const history = found[i]?.history.map(
      (h) => `${h.state}@${h.at.slice(11, 23)} by ${h.actor ?? '?'}`,
    );
    return `${id} (accepted ${new Date(lost.get(id) ?? 0).toISOString().slice(11, 23)}): ${history?.join(', ') ?? 'no record'}`;
  });
  return { lostStates, lostSample };
}

/** Handler starts per id, counted from the record's history (`processing` entries). */
async function processingStarts(records: RecordStore, ids: string[]): Promise<number> {
  let starts = 0;
  for (const r of await recordsOf(records, ids))
    starts += r?.history.filter((h) => h.state === 'processing').length ?? 0;
  return starts;
}

export async function check(input: {
  readonly stack: string;
  readonly mode: HandlerMode;
  readonly seed: number;
  readonly events: number;
  readonly requests: number;
  readonly accepted: ReadonlyMap<string, number>;
  readonly gaveUp: ReadonlyMap<string, readonly string[]>;
  readonly forgedAccepted: number;
  readonly rows: readonly LedgerRow[];
  readonly records: RecordStore;
  readonly faults: readonly string[];
  readonly statuses: ReadonlyMap<string, number>;
  readonly outageAnswers?: ReadonlyMap<string, number> | undefined;
  readonly brokerDefects?: readonly BrokerDefect[] | undefined;
  readonly durationMs: number;
}): Promise<Summary> {
  const byId = new Map(input.rows.map((r) => [r.id, r]));
  let processed = 0;
  const lostAt = new Map<string, number>();
  const latencies: number[] = [];
  for (const [id, at] of input.accepted) {
    const row = byId.get(id);
    if (!row) {
      lostAt.set(id, at);
      continue;
    }
    processed++;
    latencies.push(Math.max(0, row.firstAt - at));
  }
  const doubledRows = input.rows.filter((r) => r.rows > 1);
  const unexpected = input.rows.filter((r) => !input.accepted.has(r.id)).length;
  const done = [...input.accepted.keys()].filter((id) => byId.has(id));
  const starts = await processingStarts(input.records, done);
  // Lost after the broker stopped keeping what it acknowledged: the broker's, not onceflow's.
  const defects = input.brokerDefects ?? [];
  const brokenFrom = Math.min(...defects.map((d) => d.at));
  const ours = new Map([...lostAt].filter(([, at]) => at < brokenFrom));
  const theirs = [...lostAt].filter(([, at]) => at >= brokenFrom);
  const lost = ours.size;
  const detail = await lostDetail(input.records, new Map([...ours, ...theirs]));
  latencies.sort((a, b) => a - b);
  const doubled = doubledRows.length;
  // `timeout` and `refused` are a receiver being replaced (it cannot start without its store).
  const outageMisanswers = [...(input.outageAnswers ?? [])]
    .filter(([status]) => /^\d+$/.test(status) && status !== '503' && !status.startsWith('2'))
    .reduce((n, [, count]) => n + count, 0);
  return {
    stack: input.stack,
    mode: input.mode,
    seed: input.seed,
    events: input.events,
    requests: input.requests,
    accepted: input.accepted.size,
    processed,
    lost,
    brokerLost: theirs.length,
    brokerDefects: defects.map((d) => d.what),
    doubled,
    extraRows: doubledRows.reduce((n, r) => n + r.rows - 1, 0),
    unexpected,
    forgedAccepted: input.forgedAccepted,
    gaveUp: input.gaveUp.size,
    gaveUpSample: [...input.gaveUp]
      .slice(0, 5)
      .map(([id, answers]) => `${id}: ${answers.join(' ')}`),
    ...detail,
    redeliveryRate: processed === 0 ? 0 : Math.max(0, starts - processed) / processed,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    faults: input.faults,
    statuses: Object.fromEntries(input.statuses),
    outageAnswers: input.outageAnswers && Object.fromEntries(input.outageAnswers),
    outageMisanswers,
    durationMs: input.durationMs,
    failed:
      lost > 0 ||
      unexpected > 0 ||
      input.forgedAccepted > 0 ||
      input.gaveUp.size > 0 ||
      outageMisanswers > 0 ||
      (input.mode === 'helper' && doubled > 0),
  };
}

/** The summary as the harness prints it. */
export function formatSummary(s: Summary): string[] {
  const verdict = s.failed
    ? 'FAILED'
    : s.mode === 'plain' && s.doubled > 0
      ? 'ok (plain handler: doubles are at-least-once, as expected without the helper)'
      : 'ok';
  return [
    `${s.stack}/${s.mode} seed ${s.seed}: ${verdict}`,
    `  accepted ${s.accepted}/${s.events}, processed ${s.processed}, lost ${s.lost}, doubled ${s.doubled} (${s.extraRows} extra rows), unexpected ${s.unexpected}, forged accepted ${s.forgedAccepted}, gave up ${s.gaveUp}`,
    `  redelivery rate ${(s.redeliveryRate * 100).toFixed(1)}%, time to processed p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms; ${s.requests} requests in ${(s.durationMs / 1000).toFixed(1)} s`,
    ...(s.phasesMs
      ? [
          `  phases: ${Object.entries(s.phasesMs)
            .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
            .join(', ')}`,
        ]
      : []),
    `  answers: ${Object.entries(s.statuses)
      .map(([k, v]) => `${k}×${v}`)
      .join(' ')}`,
    `  faults: ${s.faults.join('; ') || 'none'}`,
    ...s.gaveUpSample.map((g) => `  gave up on ${g}`),
    ...s.brokerDefects.map((d) => `  broker defect: ${d}`),
    ...(s.brokerLost > 0
      ? [
          `  lost with the broker: ${s.brokerLost} accepted after it stopped keeping what it acknowledged (not counted in lost)`,
        ]
      : []),
    ...(s.lost + s.brokerLost > 0
      ? [
          `  lost, by record state: ${Object.entries(s.lostStates)
            .map(([k, v]) => `${k}×${v}`)
            .join(' ')}`,
          ...s.lostSample.map((l) => `  lost ${l}`),
        ]
      : []),
  ];
}
