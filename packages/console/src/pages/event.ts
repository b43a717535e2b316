import { type EventRecord, type Envelope, maskHeaders } from '@onceflow/core';
import { type Html, html } from '../html.js';
import { type PageContext, csrfField } from '../layout.js';
import { selectionValue, stateBadge } from './records-table.js';

type StoredRecord = EventRecord & { readonly envelope?: Envelope | undefined };

/** The raw body as the sender sent it: pretty JSON, else UTF-8 text, else base64 (said so). */
function payloadText(envelope: Envelope | undefined): string {
  if (envelope === undefined)
    return '(not kept: the store keeps the payload while an event is pending and for dead letters)';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(envelope.payload);
  } catch {
    return `(not UTF-8; base64) ${Buffer.from(envelope.payload).toString('base64')}`;
  }
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function actions(ctx: PageContext, record: StoredRecord, canRedrive: boolean): Html {
  if (record.state !== 'dead-lettered') return html``;
  if (!ctx.write) return html`<p class="notice">Read-only console: actions are off.</p>`;
  const form = (action: string, label: string) =>
    html`<form class="inline" method="post" action="${ctx.href(`/dead-letters/${action}`)}">${csrfField(ctx)}<input type="hidden" name="ids" value="${selectionValue(record)}"><button>${label}</button></form> `;
  return html`<p>${canRedrive ? form('redrive', 'Redrive…') : ''}${form('purge', 'Purge…')}</p>`;
}

/** One event's story: its fields, the timeline, last error, headers (secrets masked), payload. */
export function eventPage(ctx: PageContext, record: StoredRecord, canRedrive: boolean): Html {
  const headers = maskHeaders(record.envelope?.headers ?? {});
  return html`<dl>
<dt>Source / id</dt><dd><code>${record.source}</code> / <code data-event-id>${record.id}</code></dd>
<dt>Type</dt><dd>${record.type ?? ''}</dd><dt>Key</dt><dd>${record.key ?? ''}</dd>
<dt>State</dt><dd data-state>${stateBadge(record.state)}${record.nextAttemptAt ? html` next attempt at <time>${record.nextAttemptAt}</time>` : ''}</dd>
<dt>Attempts</dt><dd data-attempts>${record.attempts}</dd>
${record.reason ? html`<dt>Reason</dt><dd data-reason>${record.reason}</dd>` : ''}
${record.lastError ? html`<dt>Last error</dt><dd><code>${record.lastError.code}</code> ${record.lastError.name}: ${record.lastError.message}</dd>` : ''}
<dt>Trace id</dt><dd><code data-trace-id>${record.traceId ?? '—'}</code></dd>
<dt>Received</dt><dd><time>${record.receivedAt}</time></dd><dt>Consumer</dt><dd>${record.consumer ?? ''}</dd>
</dl>
${actions(ctx, record, canRedrive)}
<h2>Timeline</h2>
<table data-timeline><thead><tr><th>at</th><th>state</th><th>attempt</th><th>error code</th><th>who</th><th>note</th></tr></thead><tbody>
${record.history.map(
  (h) =>
    html`<tr><td><time>${h.at}</time></td><td>${stateBadge(h.state)}</td><td>${h.attempt ?? ''}</td><td>${h.code ?? ''}</td><td>${h.actor ?? ''}</td><td>${h.note ?? ''}</td></tr>\n`,
)}</tbody></table>
<h2>Headers</h2>
${Object.keys(headers).length === 0 ? html`<p>None kept.</p>` : html`<table data-headers><tbody>${Object.entries(headers).map(([k, v]) => html`<tr><th>${k}</th><td><code>${v}</code></td></tr>`)}</tbody></table>`}
<h2>Payload</h2><pre data-payload>${payloadText(record.envelope)}</pre>`;
}
