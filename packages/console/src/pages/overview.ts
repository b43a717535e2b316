import {
  type BacklogProbe,
  type BacklogReading,
  EVENT_STATES,
  type EventState,
  type Inbox,
  type RecordStore,
} from '@onceflow/core';
import { type Html, html } from '../html.js';
import type { PageContext } from '../layout.js';

/** Counts per state at one instant. */
export interface Sample {
  readonly at: number;
  readonly counts: Readonly<Record<EventState, number>>;
}

const SAMPLES = 60;
const UNFINISHED: readonly EventState[] = ['received', 'enqueued', 'retry-scheduled'];

/**
 * The counts each overview render takes, newest last (at most 60): the charts' data. Kept in
 * the console's process only; a restart starts the charts again.
 */
export function createSampler() {
  const samples: Sample[] = [];
  return {
    samples: () => samples as readonly Sample[],
    add(sample: Sample) {
      samples.push(sample);
      if (samples.length > SAMPLES) samples.shift();
    },
  };
}

export async function readCounts(records: RecordStore): Promise<Sample> {
  const entries = await Promise.all(
    EVENT_STATES.map(async (state) => [state, await records.count({ state })] as const),
  );
  return { at: Date.now(), counts: Object.fromEntries(entries) as Record<EventState, number> };
}

/** The oldest record still waiting for work: the last change of the oldest unfinished one. */
async function oldestUnfinished(records: RecordStore): Promise<string | undefined> {
  const pages = await Promise.all(UNFINISHED.map((state) => records.list({ state, limit: 1 })));
  const times = pages.flatMap((p) => p.records.map((r) => r.updatedAt)).sort();
  return times[0];
}

function age(since: string | undefined, now: number): string {
  if (since === undefined) return 'none waiting';
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
}

/** Per-minute rate of a state's count between samples, as an inline SVG line (no script). */
function rateChart(samples: readonly Sample[], state: EventState): Html {
  const rates: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1] as Sample;
    const b = samples[i] as Sample;
    const minutes = Math.max((b.at - a.at) / 60_000, 1 / 600);
    rates.push(Math.max(0, (b.counts[state] - a.counts[state]) / minutes));
  }
  const w = 240;
  const h = 48;
  const max = Math.max(1, ...rates);
  const points = rates
    .map(
      (r, i) =>
        `${((i / Math.max(1, rates.length - 1)) * w).toFixed(1)},${(h - (r / max) * h).toFixed(1)}`,
    )
    .join(' ');
  const last = rates.at(-1);
  return html`<figure class="card"><figcaption>${state} per minute: <b>${last === undefined ? '–' : last.toFixed(1)}</b></figcaption>
<svg width="${w}" height="${h}" role="img" aria-label="${state} per minute"><polyline fill="none" stroke="#3b6fd8" stroke-width="2" points="${points}"/></svg></figure>`;
}

/** Each transport's backlog, read now; a broker that does not answer shows its error. */
async function readBacklog(probes: Readonly<Record<string, BacklogProbe>>) {
  return Promise.all(
    Object.entries(probes).map(async ([name, probe]) => {
      try {
        return { name, reading: await probe.backlog() };
      } catch (err) {
        return { name, error: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
}

function backlogTable(rows: Awaited<ReturnType<typeof readBacklog>>): Html {
  if (rows.length === 0) return html``;
  const n = (v: number | undefined) => (v === undefined ? '–' : String(v));
  const lag = (r: BacklogReading) =>
    r.lag?.map((p) => `${p.partition}: ${p.lag}`).join(', ') ?? '–';
  return html`<h2>Backlog</h2><table data-backlog><thead><tr><th>transport</th><th>queue</th><th>ready</th><th>delayed</th><th>in flight</th><th>lag per partition</th></tr></thead><tbody>
${rows.map((row) =>
  'reading' in row && row.reading
    ? html`<tr><td>${row.name}</td><td>${row.reading.queue}</td><td>${row.reading.ready}</td><td>${n(row.reading.delayed)}</td><td>${n(row.reading.inFlight)}</td><td>${lag(row.reading)}</td></tr>`
    : html`<tr><td>${row.name}</td><td colspan="5" class="error">not answering: ${'error' in row ? row.error : ''}</td></tr>`,
)}</tbody></table>`;
}

/** Payload conflicts and pending claims from the inbox, when the console was given it. */
async function inboxCards(inbox: Pick<Inbox, 'stats'> | undefined): Promise<Html> {
  if (!inbox) return html``;
  try {
    const stats = await inbox.stats();
    return html`<div class="card" data-conflicts="${stats.conflicts}">payload conflicts<b>${stats.conflicts}</b></div><div class="card" data-pending="${stats.pending}">claims not yet enqueued<b>${stats.pending}</b></div>`;
  } catch (err) {
    return html`<div class="card error">inbox not answering: ${err instanceof Error ? err.message : String(err)}</div>`;
  }
}

export async function overviewPage(
  ctx: PageContext,
  records: RecordStore,
  sampler: ReturnType<typeof createSampler>,
  probes: Readonly<Record<string, BacklogProbe>> = {},
  inbox?: Pick<Inbox, 'stats'>,
): Promise<Html> {
  const [sample, oldest, backlog, inboxHtml] = await Promise.all([
    readCounts(records),
    oldestUnfinished(records),
    readBacklog(probes),
    inboxCards(inbox),
  ]);
  sampler.add(sample);
  const samples = sampler.samples();
  return html`<section class="cards">
${EVENT_STATES.map(
  (state) =>
    html`<a class="card" href="${ctx.href(`/events?state=${state}`)}" data-state="${state}">${state}<b>${sample.counts[state]}</b></a>`,
)}
<div class="card" data-oldest>oldest unprocessed<b>${age(oldest, sample.at)}</b></div>${inboxHtml}</section>
${backlogTable(backlog)}
<h2>Rates</h2><section class="cards">${rateChart(samples, 'completed')}${rateChart(samples, 'retry-scheduled')}${rateChart(samples, 'dead-lettered')}</section>
<p>Refreshed every few seconds; rates from the counts this console took (${samples.length} samples).</p>`;
}
