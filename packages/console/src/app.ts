import { createAuth } from './auth.js';
import { type DeadLetterAction, previewPage, readSelection, runAction } from './actions.js';
import { readFilter } from './filter.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { type ConsoleOptions, resolveConsoleOptions } from './options.js';
import { deadLettersPage } from './pages/dead-letters.js';
import { eventPage } from './pages/event.js';
import { eventsPage } from './pages/events.js';
import { createSampler, overviewPage } from './pages/overview.js';
import { discardDeadLetters, redriveDeadLetters } from '@onceflow/core';

const MAX_FORM_BYTES = 256 * 1024;

/** Headers on every page: no caching, no framing, no script or outside resource at all. */
const SECURITY_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const page = (body: Html | string, status = 200, extra: Record<string, string> = {}) =>
  new Response(String(body), { status, headers: { ...SECURITY_HEADERS, ...extra } });

/** The console as a Fetch handler: `(request) => Response`. */
export function createConsoleHandler(
  options: ConsoleOptions,
): (request: Request) => Promise<Response> {
  const config = resolveConsoleOptions(options);
  const auth = createAuth(config);
  const sampler = createSampler();
  const { records, transport } = config;
  const canRedrive = transport !== undefined;
  const href = (path: string) =>
    `${config.basePath}${path === '/' && config.basePath ? '' : path}` || '/';

  const signInPage = (ctx: PageContext, failed: boolean, status: number) =>
    page(
      layout(
        ctx,
        'Sign in',
        html`${failed ? html`<p class="error">That token is not right.</p>` : ''}<form method="post" action="${href('/login')}"><label>Token <input type="password" name="token" autocomplete="current-password" autofocus></label> <button>Sign in</button></form>`,
      ),
      status,
    );

  return async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (
      config.basePath &&
      url.pathname !== config.basePath &&
      !url.pathname.startsWith(`${config.basePath}/`)
    )
      return page('Not found', 404);
    const path = url.pathname.slice(config.basePath.length) || '/';
    const method = request.method.toUpperCase();
    const anonymous: PageContext = { href, write: config.write };

    if (path === '/login' && method === 'POST' && 'token' in config.auth) {
      const form = await readForm(request);
      const cookie = form && auth.signIn(form.get('token') ?? '');
      if (!cookie) return signInPage(anonymous, true, 401);
      return new Response(null, {
        status: 303,
        headers: { location: href('/'), 'set-cookie': cookie },
      });
    }
    const operator = await auth.identify(request);
    if (!operator) {
      if ('token' in config.auth) return signInPage(anonymous, false, 401);
      return page(
        layout(anonymous, 'Not signed in', html`<p>Sign in to the application first.</p>`),
        401,
      );
    }
    const ctx: PageContext = { href, operator, write: config.write };

    if (method === 'POST') {
      const action = /^\/dead-letters\/(redrive|purge)$/.exec(path)?.[1] as
        | DeadLetterAction
        | undefined;
      if (path === '/logout')
        return new Response(null, {
          status: 303,
          headers: { location: href('/'), 'set-cookie': auth.signOut() },
        });
      if (!action) return page('Not found', 404);
      const form = await readForm(request);
      if (!form)
        return page(
          layout(ctx, 'Too large', html`<p class="error">The form is too large.</p>`),
          413,
        );
      if (!auth.checkCsrf(request, operator, form))
        return page(
          layout(
            ctx,
            'Refused',
            html`<p class="error">This form did not come from this console (CSRF check failed). Reload the page and try again.</p>`,
          ),
          403,
        );
      if (!config.write)
        return page(
          layout(
            ctx,
            'Read-only',
            html`<p class="error">This console is read-only: redrive and purge are off.</p>`,
          ),
          403,
        );
      if (action === 'redrive' && !canRedrive)
        return page(
          layout(
            ctx,
            'No transport',
            html`<p class="error">Redrive needs the console's transport option.</p>`,
          ),
          403,
        );
      const selection = readSelection(form);
      if ('problem' in selection)
        return page(
          layout(
            ctx,
            'Nothing to do',
            html`<p class="error">${selection.problem}</p><p><a href="${href('/dead-letters')}">Back</a></p>`,
          ),
          400,
        );
      const actor = `console:${operator.name}`;
      if (form.get('apply') !== '1') {
        const preview =
          action === 'redrive'
            ? await redriveDeadLetters(
                { records, transport: transport as NonNullable<typeof transport> },
                { ...selection, actor },
              )
            : await discardDeadLetters(records, { ...selection, actor });
        return page(previewPage(ctx, action, form, preview));
      }
      const streamed = runAction(ctx, { records, transport }, action, selection, actor);
      return new Response(streamed.body, { headers: SECURITY_HEADERS });
    }
    if (method !== 'GET' && method !== 'HEAD')
      return page('Method not allowed', 405, { allow: 'GET, HEAD, POST' });

    if (path === '/') {
      const head = html`<meta http-equiv="refresh" content="${config.refreshSeconds}">`;
      return page(
        layout(ctx, 'Overview', await overviewPage(ctx, records, sampler, config.backlog), head),
      );
    }
    if (path === '/events') {
      const source = url.searchParams.get('source')?.trim();
      const id = url.searchParams.get('id')?.trim();
      if (source && id) {
        const found = await records.get(source, id);
        if (found)
          return new Response(null, {
            status: 303,
            headers: {
              location: href(`/events/${encodeURIComponent(source)}/${encodeURIComponent(id)}`),
            },
          });
        return page(
          layout(
            ctx,
            'Events',
            html`<p class="error">No event ${source} / ${id} in the record.</p>`,
          ),
          404,
        );
      }
      const f = readFilter(url.searchParams);
      const body = await eventsPage(
        ctx,
        records,
        f,
        url.searchParams.get('cursor') ?? undefined,
        config.pageSize,
      );
      return page(
        layout(
          ctx,
          'Events',
          id
            ? html`<p class="notice">To open one event, give its source with its id.</p>${body}`
            : body,
        ),
        f.problem ? 400 : 200,
      );
    }
    const one = /^\/events\/([^/]+)\/([^/]+)$/.exec(path);
    if (one) {
      const [source, id] = [
        decodeURIComponent(one[1] as string),
        decodeURIComponent(one[2] as string),
      ];
      const record = await records.get(source, id);
      if (!record)
        return page(
          layout(
            ctx,
            'Not found',
            html`<p class="error">No event ${source} / ${id} in the record.</p>`,
          ),
          404,
        );
      return page(layout(ctx, `${source} / ${id}`, eventPage(ctx, record, canRedrive)));
    }
    if (path === '/dead-letters') {
      const f = readFilter(url.searchParams);
      const body = await deadLettersPage(
        ctx,
        records,
        f,
        url.searchParams.get('cursor') ?? undefined,
        config.pageSize,
        canRedrive,
      );
      return page(layout(ctx, 'Dead letters', body), f.problem ? 400 : 200);
    }
    return page(layout(ctx, 'Not found', html`<p>No such page.</p>`), 404);
  };
}

/** The urlencoded form of a POST, or undefined past `MAX_FORM_BYTES`. */
async function readForm(request: Request): Promise<URLSearchParams | undefined> {
  const text = await request.text();
  if (text.length > MAX_FORM_BYTES) return undefined;
  return new URLSearchParams(text);
}
