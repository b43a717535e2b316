import { Html, html } from './html.js';

export interface PageContext {
  /** `basePath` + path: every link and form goes through it. */
  readonly href: (path: string) => string;
  readonly operator?: { readonly name: string; readonly csrf: string } | undefined;
  readonly write: boolean;
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:.6rem 1rem;display:flex;gap:1.2rem;align-items:center}
header a{color:#cfd8ea;text-decoration:none}header a:hover{color:#fff}header .who{margin-left:auto;color:#9aa6bd}
main{padding:1rem 1.2rem;max-width:1200px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1.2rem}dt{font-weight:600}dd{margin:0}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border-bottom:1px solid #e3e6eb;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}code,pre{font:12px/1.4 ui-monospace,monospace}
pre{background:#fff;border:1px solid #e3e6eb;padding:.6rem;overflow:auto;max-height:28rem;white-space:pre-wrap;word-break:break-all}
.cards{display:flex;flex-wrap:wrap;gap:.6rem}.card{background:#fff;border:1px solid #e3e6eb;padding:.6rem .9rem;min-width:9rem}
.card b{display:block;font-size:1.5rem}.state{padding:.05rem .35rem;border-radius:3px;background:#eef1f5}
.state-dead-lettered{background:#fde2e1}.state-completed{background:#dff3e4}.state-retry-scheduled{background:#fff1cc}
form.inline{display:inline}fieldset{border:1px solid #e3e6eb;background:#fff;margin:.6rem 0}
.notice{background:#fff8e1;border:1px solid #f0d48a;padding:.6rem}.error{background:#fde2e1;border:1px solid #f3a6a2;padding:.6rem}
`;

/** The page shell: navigation, who is signed in, and the content. No script, no external asset. */
export function layout(ctx: PageContext, title: string, content: Html, head?: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title} · onceflow</title><style>${new Html(STYLE)}</style>${head}</head>
<body><header><strong>onceflow</strong>
<a href="${ctx.href('/')}">Overview</a><a href="${ctx.href('/events')}">Events</a><a href="${ctx.href('/dead-letters')}">Dead letters</a>
<span class="who">${ctx.operator ? `${ctx.operator.name}${ctx.write ? '' : ' (read-only)'}` : ''}</span></header>
<main><h1>${title}</h1>${content}</main></body></html>`;
}

/** A hidden CSRF field for a form. */
export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.operator?.csrf ?? ''}">`;
}
