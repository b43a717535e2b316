import type { RecordStore } from '@onceflow/core';
import { EVENT_STATES } from '@onceflow/core';
import { type Html, html } from '../html.js';
import type { PageContext } from '../layout.js';
import { type FormFilter, filterQuery } from '../filter.js';
import { recordsTable } from './records-table.js';

/** The filter form shared by the events and dead-letter pages. */
export function filterForm(
  ctx: PageContext,
  action: string,
  f: FormFilter,
  withState: boolean,
): Html {
  const input = (name: keyof FormFilter['fields'], label: string, placeholder = '') =>
    html`<label>${label} <input name="${name}" value="${f.fields[name]}" placeholder="${placeholder}"></label> `;
  return html`<form method="get" action="${ctx.href(action)}" role="search"><fieldset>
${input('source', 'Source', 'stripe')}${html`<label>Event id <input name="id" placeholder="evt_…"></label> `}${input('type', 'Type')}${input('reason', 'Reason contains')}${
  withState
    ? html`<label>State <select name="state"><option value="">any</option>${EVENT_STATES.map(
        (s) => html`<option${f.fields.state === s ? html` selected` : ''}>${s}</option>`,
      )}</select></label> `
    : ''
}${input('olderThan', 'Older than', '6h')}<button>Search</button></fieldset></form>
${f.problem ? html`<p class="error">${f.problem}</p>` : ''}`;
}

export async function eventsPage(
  ctx: PageContext,
  records: RecordStore,
  f: FormFilter,
  cursor: string | undefined,
  pageSize: number,
): Promise<Html> {
  const page = f.problem
    ? { records: [], next: undefined }
    : await records.list({ ...f.filter, limit: pageSize, cursor });
  const total = f.problem ? 0 : await records.count(f.filter);
  return html`${filterForm(ctx, '/events', f, true)}
<p>${total} matching, oldest change first.</p>
${recordsTable(ctx, page.records)}
${page.next ? html`<p><a rel="next" href="${ctx.href(`/events${filterQuery(f.fields, { cursor: page.next })}`)}">Next page</a></p>` : ''}`;
}
