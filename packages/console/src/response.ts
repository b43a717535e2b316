import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';

/** Headers on every page: no caching, no framing, no script or outside resource at all. */
export const SECURITY_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

export const page = (
  body: Html | string,
  status = 200,
  extra: Record<string, string> = {},
): Response => new Response(String(body), { status, headers: { ...SECURITY_HEADERS, ...extra } });

/** A page that says why, with the status. */
export const refusal = (
  ctx: PageContext,
  title: string,
  message: string,
  status: number,
): Response => page(layout(ctx, title, html`<p class="error">${message}</p>`), status);

/** A streamed page (an action's progress) with the same headers. */
export const streamed = (response: Response): Response =>
  new Response(response.body, { headers: SECURITY_HEADERS });

export const redirect = (location: string, cookie?: string): Response =>
  new Response(null, {
    status: 303,
    headers: cookie ? { location, 'set-cookie': cookie } : { location },
  });
