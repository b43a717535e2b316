import { createAuth } from './auth.js';
import { readFilter } from './filter.js';
import { html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { type ConsoleOptions, resolveConsoleOptions } from './options.js';
import { deadLettersPage } from './pages/dead-letters.js';
import { eventPage } from './pages/event.js';
import { eventsPage } from './pages/events.js';
import { createSampler, overviewPage } from './pages/overview.js';
import { handleAction, readForm } from './post.js';
import { replayFormPage } from './replay.js';
import { page, redirect, refusal } from './response.js';

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
      return redirect(href('/'), cookie);
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
      if (path === '/logout') return redirect(href('/'), auth.signOut());
      return handleAction({ ...config, auth }, ctx, operator, request, path);
    }
    if (method !== 'GET' && method !== 'HEAD')
      return page('Method not allowed', 405, { allow: 'GET, HEAD, POST' });

    if (path === '/') {
      const head = html`<meta http-equiv="refresh" content="${config.refreshSeconds}">`;
      return page(
        layout(
          ctx,
          'Overview',
          await overviewPage(ctx, records, sampler, config.backlog, config.inbox),
          head,
        ),
      );
    }
    if (path === '/events') {
      const source = url.searchParams.get('source')?.trim();
      const id = url.searchParams.get('id')?.trim();
      if (source && id) {
        const found = await records.get(source, id);
        if (found)
          return redirect(href(`/events/${encodeURIComponent(source)}/${encodeURIComponent(id)}`));
        return refusal(ctx, 'Events', `No event ${source} / ${id} in the record.`, 404);
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
        return refusal(ctx, 'Not found', `No event ${source} / ${id} in the record.`, 404);
      return page(layout(ctx, `${source} / ${id}`, eventPage(ctx, record, canRedrive)));
    }
    if (path === '/replay') return page(replayFormPage(ctx, {}));
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
