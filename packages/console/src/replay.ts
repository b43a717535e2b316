import {
  type Envelope,
  type RecordStore,
  type Transport,
  isReplayId,
  newReplayId,
  publishInNewTraces,
  replayEnvelope,
} from '@onceflow/core';
import { parseAge } from './filter.js';
import { type Html, html } from './html.js';
import { type PageContext, csrfField, layout } from './layout.js';

/** Most events one replay from the console selects. */
export const REPLAY_LIMIT = 1000;
const PAGE = 200;
const PREVIEW_ROWS = 50;

export interface ReplayPlan {
  readonly replayId: string;
  /** Completed events with their stored envelopes: what would be published, oldest first. */
  readonly events: readonly Envelope[];
  /** Selected but not replayable, with why. */
  readonly skipped: readonly {
    readonly source: string;
    readonly id: string;
    readonly why: string;
  }[];
}

const FIELDS = ['ids', 'source', 'type', 'newerThan', 'olderThan'] as const;

/** The replay form's fields; ids are `source/id`, one a line. */
export function readReplayForm(form: URLSearchParams) {
  const get = (k: (typeof FIELDS)[number]) => (form.get(k) ?? '').trim();
  const fields = Object.fromEntries(FIELDS.map((k) => [k, get(k)])) as Record<
    (typeof FIELDS)[number],
    string
  >;
  const replayId = (form.get('replayId') ?? '').trim() || newReplayId();
  if (!isReplayId(replayId)) return { fields, problem: 'replay id: 1 to 64 of A-Z a-z 0-9 . _ -' };
  const ids = fields.ids
    .split(/\s+/)
    .filter(Boolean)
    .map((line) => {
      const slash = line.indexOf('/');
      return slash > 0 ? { source: line.slice(0, slash), id: line.slice(slash + 1) } : undefined;
    });
  if (ids.some((x) => x === undefined || x.id === ''))
    return { fields, problem: 'ids: one source/id a line, e.g. stripe/evt_1' };
  const newer = fields.newerThan ? parseAge(fields.newerThan) : undefined;
  const older = fields.olderThan ? parseAge(fields.olderThan) : undefined;
  if ((fields.newerThan && newer === undefined) || (fields.olderThan && older === undefined))
    return { fields, problem: 'ages: minutes, hours or days, e.g. 30m, 6h, 2d' };
  if (ids.length === 0 && !fields.source && !fields.type && newer === undefined)
    return { fields, problem: 'name ids, or narrow by source, type or "completed within" first' };
  const now = Date.now();
  const selection =
    ids.length > 0
      ? { ids: ids as { source: string; id: string }[] }
      : {
          filter: {
            ...(fields.source ? { source: fields.source } : {}),
            ...(fields.type ? { type: fields.type } : {}),
            ...(newer !== undefined ? { updatedAfter: new Date(now - newer) } : {}),
            ...(older !== undefined ? { updatedBefore: new Date(now - older) } : {}),
          },
        };
  return { fields, replayId, selection };
}

type Selection = NonNullable<ReturnType<typeof readReplayForm>['selection']>;

/** What a replay would publish: completed events that kept their envelope, at most REPLAY_LIMIT. */
export async function planReplay(
  records: RecordStore,
  selection: Selection,
  replayId: string,
): Promise<ReplayPlan> {
  const events: Envelope[] = [];
  const skipped: { source: string; id: string; why: string }[] = [];
  const consider = async (source: string, id: string) => {
    const stored = await records.get(source, id);
    if (!stored) skipped.push({ source, id, why: 'no such event' });
    else if (stored.state !== 'completed')
      skipped.push({ source, id, why: `${stored.state}, not completed` });
    else if (!stored.envelope) skipped.push({ source, id, why: 'the store kept no envelope' });
    else events.push(stored.envelope);
  };
  if (selection.ids !== undefined) {
    for (const { source, id } of selection.ids.slice(0, REPLAY_LIMIT)) await consider(source, id);
    return { replayId, events, skipped };
  }
  let cursor: string | undefined;
  do {
    const page = await records.list({
      ...selection.filter,
      state: 'completed',
      limit: PAGE,
      cursor,
    });
    for (const r of page.records)
      if (events.length + skipped.length < REPLAY_LIMIT) await consider(r.source, r.id);
    cursor = page.next;
  } while (cursor !== undefined && events.length + skipped.length < REPLAY_LIMIT);
  return { replayId, events, skipped };
}

export function replayFormPage(
  ctx: PageContext,
  fields: Partial<Record<(typeof FIELDS)[number], string>>,
  problem?: string,
): Html {
  const input = (name: (typeof FIELDS)[number], label: string, placeholder: string) =>
    html`<label>${label} <input name="${name}" value="${fields[name] ?? ''}" placeholder="${placeholder}"></label> `;
  return layout(
    ctx,
    'Replay',
    html`<p>Publishes copies of completed events so workers process them again, on purpose (after a
handler fix). A copy's id is <code>&lt;id&gt;#replay-&lt;replay id&gt;</code> with the header
<code>x-onceflow-replay-of</code>; replaying with the same replay id again publishes nothing new.</p>
${problem ? html`<p class="error">${problem}</p>` : ''}
${ctx.write ? '' : html`<p class="notice">Read-only console: replay is off.</p>`}
<form method="post" action="${ctx.href('/replay')}">${csrfField(ctx)}<fieldset>
<label>Events (source/id, one a line)<br><textarea name="ids" rows="4" cols="50">${fields.ids ?? ''}</textarea></label><br>
or ${input('source', 'Source', 'stripe')}${input('type', 'Type', 'charge.succeeded')}${input('newerThan', 'Completed within', '6h')}${input('olderThan', 'and longer ago than', '1h')}
<br><button data-action="replay-preview">Preview replay…</button> (at most ${REPLAY_LIMIT} events)</fieldset></form>`,
  );
}

export function replayPreviewPage(ctx: PageContext, form: URLSearchParams, plan: ReplayPlan): Html {
  const n = plan.events.length;
  const carried = [...form.entries()].filter(
    ([k]) => k !== '_csrf' && k !== 'apply' && k !== 'replayId',
  );
  return layout(
    ctx,
    `Replay ${n} event${n === 1 ? '' : 's'}?`,
    html`<p class="notice" data-dry-run="${n}">Dry run: nothing published. ${n} completed event${n === 1 ? '' : 's'} would be published again as replay <code>${plan.replayId}</code>${
      plan.skipped.length ? `; ${plan.skipped.length} selected would be skipped` : ''
    }.</p>
${
  n > 0
    ? html`<form method="post" action="${ctx.href('/replay')}">${csrfField(ctx)}<input type="hidden" name="apply" value="1"><input type="hidden" name="replayId" value="${plan.replayId}">${carried.map(
        ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
      )}<button data-confirm>Replay now</button> <a href="${ctx.href('/replay')}">Cancel</a></form>`
    : html`<p><a href="${ctx.href('/replay')}">Back</a></p>`
}
<table><thead><tr><th>source / id</th><th>type</th><th>copy id</th></tr></thead><tbody>${plan.events
      .slice(0, PREVIEW_ROWS)
      .map(
        (e) =>
          html`<tr><td>${e.source} / ${e.id}</td><td>${e.type}</td><td><code>${replayEnvelope(e, plan.replayId).id}</code></td></tr>`,
      )}</tbody></table>${n > PREVIEW_ROWS ? html`<p>…and ${n - PREVIEW_ROWS} more.</p>` : ''}
${plan.skipped.length ? html`<h2>Skipped</h2><ul>${plan.skipped.map((s) => html`<li>${s.source} / ${s.id}: ${s.why}</li>`)}</ul>` : ''}`,
  );
}

/** Publishes the plan's copies (each in a new trace linked to its original), streaming progress. */
export function runReplay(
  ctx: PageContext,
  transport: Pick<Transport, 'publish'>,
  plan: ReplayPlan,
  actor: string,
): Response {
  const encoder = new TextEncoder();
  const [head, tail] = layout(ctx, 'Replay', html`<!--split-->`).value.split('<!--split-->') as [
    string,
    string,
  ];
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (h: Html | string) => controller.enqueue(encoder.encode(String(h)));
      write(head);
      let done = 0;
      try {
        for (let i = 0; i < plan.events.length; i += 50) {
          const messages = plan.events.slice(i, i + 50).map((e) => {
            const copy = replayEnvelope(e, plan.replayId);
            return { envelope: copy, dedupeKey: copy.id };
          });
          await publishInNewTraces(transport, messages, { operation: 'replay', actor });
          done += messages.length;
          write(html`<p class="progress">${done} of ${plan.events.length} published</p>\n`);
        }
        write(
          html`<p class="notice" data-done="${done}">${done} published as replay <code>${plan.replayId}</code>.</p>`,
        );
      } catch (err) {
        write(
          html`<p class="error">Stopped after ${done}: ${err instanceof Error ? err.message : String(err)}. Replay again with the same replay id to go on without doubles.</p>`,
        );
      }
      write(html`<p><a href="${ctx.href('/replay')}">Back to replay</a></p>${tail}`);
      controller.close();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/html; charset=utf-8' } });
}
