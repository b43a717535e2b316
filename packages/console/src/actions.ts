import {
  type DeadLetterActionResult,
  type DeadLetterSelection,
  type RecordStore,
  type Transport,
  discardDeadLetters,
  redriveDeadLetters,
} from '@onceflow/core';
import { readFilter } from './filter.js';
import { type Html, html } from './html.js';
import { type PageContext, csrfField, layout } from './layout.js';
import { recordsTable } from './pages/records-table.js';

export type DeadLetterAction = 'redrive' | 'purge';

const VERB: Record<DeadLetterAction, [string, string]> = {
  redrive: ['Redrive', 'redriven'],
  purge: ['Purge', 'purged'],
};
const PREVIEW_ROWS = 50;

/** The selection a form names: listed `ids` (`source/id`), or every dead letter its filter matches. */
export function readSelection(form: URLSearchParams): DeadLetterSelection | { problem: string } {
  if (form.get('scope') === 'filter') {
    const f = readFilter(form);
    if (f.problem) return { problem: f.problem };
    const { state: _state, ...filter } = f.filter;
    return { filter };
  }
  const ids = form.getAll('ids').flatMap((value) => {
    const [source, id, ...rest] = value.split('/');
    return source && id && rest.length === 0
      ? [{ source: decodeURIComponent(source), id: decodeURIComponent(id) }]
      : [];
  });
  if (ids.length === 0) return { problem: 'Nothing selected: tick at least one dead letter.' };
  return { ids };
}

function confirmForm(ctx: PageContext, action: DeadLetterAction, form: URLSearchParams): Html {
  const carried = [...form.entries()].filter(([k]) => k !== '_csrf' && k !== 'apply');
  return html`<form method="post" action="${ctx.href(`/dead-letters/${action}`)}">${csrfField(ctx)}<input type="hidden" name="apply" value="1">${carried.map(
    ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
  )}<button data-confirm>${VERB[action][0]} now</button> <a href="${ctx.href('/dead-letters')}">Cancel</a></form>`;
}

/** The dry run: exactly what would be touched, with the count, and a form to confirm. */
export function previewPage(
  ctx: PageContext,
  action: DeadLetterAction,
  form: URLSearchParams,
  result: DeadLetterActionResult,
): Html {
  const n = result.selected.length;
  const shown = result.selected.slice(0, PREVIEW_ROWS);
  return layout(
    ctx,
    `${VERB[action][0]} ${n} dead letter${n === 1 ? '' : 's'}?`,
    html`<p class="notice" data-dry-run="${n}">Dry run: nothing has changed. ${n} dead letter${n === 1 ? '' : 's'} would be ${VERB[action][1]}${
      action === 'redrive'
        ? ' (published again, then processed from attempt 1)'
        : ' (kept as discarded for dedupe and audit)'
    }${result.skipped.length ? `; ${result.skipped.length} selected are no longer dead letters and would be skipped` : ''}.</p>
${n > 0 ? confirmForm(ctx, action, form) : html`<p><a href="${ctx.href('/dead-letters')}">Back</a></p>`}
${recordsTable(ctx, shown)}${n > shown.length ? html`<p>…and ${n - shown.length} more.</p>` : ''}`,
  );
}

/**
 * Runs the action and streams the page as it goes: a progress line at most every 250 ms, then
 * the summary. Each record's history gets `console:<operator>` as the actor (the audit record).
 */
export function runAction(
  ctx: PageContext,
  stores: {
    readonly records: RecordStore;
    readonly transport?: Pick<Transport, 'publish'> | undefined;
  },
  action: DeadLetterAction,
  selection: DeadLetterSelection,
  actor: string,
): Response {
  const encoder = new TextEncoder();
  const page = layout(
    ctx,
    `${VERB[action][0]} dead letters`,
    html`<div id="progress"></div><!--split-->`,
  ).value;
  const [head, tail] = page.split('<!--split-->') as [string, string];
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (h: Html | string) => controller.enqueue(encoder.encode(String(h)));
      write(head);
      let last = 0;
      const onProgress = (done: number, total: number) => {
        if (Date.now() - last < 250 && done < total) return;
        last = Date.now();
        write(html`<p class="progress">${done} of ${total} ${VERB[action][1]}</p>\n`);
      };
      try {
        const options = { ...selection, actor, apply: true, onProgress };
        const result =
          action === 'redrive'
            ? await redriveDeadLetters(
                {
                  records: stores.records,
                  transport: stores.transport as Pick<Transport, 'publish'>,
                },
                options,
              )
            : await discardDeadLetters(stores.records, options);
        write(
          html`<p class="notice" data-done="${result.done}">${result.done} of ${result.selected.length} ${VERB[action][1]}${
            result.skipped.length
              ? `; ${result.skipped.length} skipped (no longer dead letters)`
              : ''
          }.</p><p><a href="${ctx.href('/dead-letters')}">Back to dead letters</a></p>`,
        );
      } catch (err) {
        write(
          html`<p class="error">Stopped: ${err instanceof Error ? err.message : String(err)}. What was done stays done; run it again for the rest.</p>`,
        );
      }
      write(tail);
      controller.close();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/html; charset=utf-8' } });
}
