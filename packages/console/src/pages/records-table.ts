import type { EventRecord } from '@onceflow/core';
import { type Html, html } from '../html.js';
import type { PageContext } from '../layout.js';

export const eventHref = (ctx: PageContext, r: Pick<EventRecord, 'source' | 'id'>) =>
  ctx.href(`/events/${encodeURIComponent(r.source)}/${encodeURIComponent(r.id)}`);

export const stateBadge = (state: string) =>
  html`<span class="state state-${state}">${state}</span>`;

/** `source/id` with both parts URI-encoded: the value of a selection checkbox. */
export const selectionValue = (r: Pick<EventRecord, 'source' | 'id'>) =>
  `${encodeURIComponent(r.source)}/${encodeURIComponent(r.id)}`;

/** A table of records; `select` adds a checkbox per row (named `ids`, in form `form`). */
export function recordsTable(
  ctx: PageContext,
  records: readonly EventRecord[],
  select?: { readonly form: string },
): Html {
  if (records.length === 0) return html`<p>No events match.</p>`;
  return html`<table><thead><tr>${select ? html`<th></th>` : ''}<th>source / id</th><th>type</th><th>state</th><th>attempts</th><th>reason or last error</th><th>updated</th></tr></thead><tbody>
${records.map(
  (r) =>
    html`<tr>${
      select
        ? html`<td><input type="checkbox" name="ids" form="${select.form}" value="${selectionValue(r)}" aria-label="select ${r.id}"></td>`
        : ''
    }<td><a href="${eventHref(ctx, r)}">${r.source} / ${r.id}</a></td><td>${r.type ?? ''}</td><td>${stateBadge(r.state)}</td><td>${r.attempts}</td><td>${r.reason ?? r.lastError?.message ?? ''}</td><td><time>${r.updatedAt}</time></td></tr>\n`,
)}</tbody></table>`;
}
