import type { RecordStore } from '@onceflow/core';
import { type Html, html } from '../html.js';
import { type PageContext, csrfField } from '../layout.js';
import { type FormFilter, filterQuery } from '../filter.js';
import { filterForm } from './events.js';
import { recordsTable } from './records-table.js';

/** The hidden fields that carry a filter into an action form. */
export function filterFields(f: FormFilter): Html {
  return html`${Object.entries(f.fields)
    .filter(([name, v]) => v !== '' && name !== 'state')
    .map(([name, v]) => html`<input type="hidden" name="${name}" value="${v}">`)}`;
}

/** The id of the form the row checkboxes belong to. */
export const SELECTION_FORM = 'selection';

function actionForms(ctx: PageContext, f: FormFilter, total: number, canRedrive: boolean): Html {
  if (!ctx.write) return html`<p class="notice">Read-only console: redrive and purge are off.</p>`;
  const redrive = ctx.href('/dead-letters/redrive');
  const purge = ctx.href('/dead-letters/purge');
  return html`<form class="inline" id="${SELECTION_FORM}" method="post" action="${purge}">${csrfField(ctx)}<input type="hidden" name="scope" value="selected">${
    canRedrive
      ? html`<button formaction="${redrive}" data-action="redrive-selected">Redrive selected…</button> `
      : ''
  }<button data-action="purge-selected">Purge selected…</button></form>
<form class="inline" method="post" action="${purge}">${csrfField(ctx)}<input type="hidden" name="scope" value="filter">${filterFields(f)}${
    canRedrive
      ? html`<button formaction="${redrive}" data-action="redrive-filter">Redrive all ${total} matching…</button> `
      : ''
  }<button data-action="purge-filter">Purge all ${total} matching…</button></form>
<p>Each action shows what it would touch first, and acts only once confirmed.</p>`;
}

export async function deadLettersPage(
  ctx: PageContext,
  records: RecordStore,
  f: FormFilter,
  cursor: string | undefined,
  pageSize: number,
  canRedrive: boolean,
): Promise<Html> {
  const filter = { ...f.filter, state: 'dead-lettered' as const };
  const page = f.problem
    ? { records: [], next: undefined }
    : await records.list({ ...filter, limit: pageSize, cursor });
  const total = f.problem ? 0 : await records.count(filter);
  return html`${filterForm(ctx, '/dead-letters', f, false)}
<p data-total="${total}">${total} dead letters match, oldest first.</p>
${actionForms(ctx, f, total, canRedrive)}
${recordsTable(ctx, page.records, ctx.write ? { form: SELECTION_FORM } : undefined)}
${page.next ? html`<p><a rel="next" href="${ctx.href(`/dead-letters${filterQuery(f.fields, { cursor: page.next })}`)}">Next page</a></p>` : ''}`;
}
