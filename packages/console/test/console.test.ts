import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/index.js';
import { POISON_ID, TOKEN, startFixture, waitFor } from './fixture.js';

const bearer = { authorization: `Bearer ${TOKEN}` };
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

describe('the console over real HTTP and the embedded store', () => {
  it('asks for sign-in without the token, and a cookie session works after it', async () => {
    await using fx = await startFixture();
    const anonymous = await fetch(`${fx.base}/console/dead-letters`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toContain('Sign in');
    const wrong = await fetch(`${fx.base}/console/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'nope' }),
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    const signIn = await fetch(`${fx.base}/console/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: TOKEN }),
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(TOKEN);
    const page = await fetch(`${fx.base}/console/dead-letters`, {
      headers: { cookie: cookie.split(';')[0] as string },
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(POISON_ID);
  });

  it('escapes payloads and errors, masks signature headers, and sends a strict CSP', async () => {
    await using fx = await startFixture();
    const res = await fetch(`${fx.base}/console/events/shop/${POISON_ID}`, { headers: bearer });
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await res.text();
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;script&gt;');
    expect(page).toContain('card declined &lt;b&gt;twice&lt;/b&gt;');
    expect(page).not.toContain('sha256=deadbeef');
    expect(page).toContain('[redacted]');
    expect(page).toContain('req-evt_poison');
  });

  it('refuses an action without the CSRF token, from another origin, and on a read-only console', async () => {
    await using fx = await startFixture();
    const list = await (await fetch(`${fx.base}/console/dead-letters`, { headers: bearer })).text();
    const csrf = csrfOf(list);
    expect(csrf).not.toBe('');
    const ids = `shop/${POISON_ID}`;
    const post = (
      path: string,
      form: Record<string, string>,
      headers: Record<string, string> = {},
    ) =>
      fetch(`${fx.base}${path}`, {
        method: 'POST',
        headers: { ...bearer, ...headers },
        body: new URLSearchParams(form),
      });
    expect((await post('/console/dead-letters/purge', { ids, apply: '1' })).status).toBe(403);
    expect(
      (
        await post(
          '/console/dead-letters/purge',
          { ids, apply: '1', _csrf: csrf },
          { origin: 'https://evil.example' },
        )
      ).status,
    ).toBe(403);
    const ro = await (await fetch(`${fx.base}/ro/dead-letters`, { headers: bearer })).text();
    expect(ro).toContain('Read-only');
    expect(ro).not.toContain('Purge selected');
    const roCsrf = csrfOf(
      await (await fetch(`${fx.base}/ro/events/shop/${POISON_ID}`, { headers: bearer })).text(),
    );
    const refused = await post('/ro/dead-letters/purge', { ids, apply: '1', _csrf: roCsrf });
    expect(refused.status).toBe(403);
    expect((await fx.records.get('shop', POISON_ID))?.state).toBe('dead-lettered');
  });

  it('previews a purge by filter with its count, then purges with the operator in the history', async () => {
    await using fx = await startFixture();
    const csrf = csrfOf(
      await (await fetch(`${fx.base}/console/dead-letters`, { headers: bearer })).text(),
    );
    const form = { scope: 'filter', type: 'order.paid', _csrf: csrf };
    const preview = await (
      await fetch(`${fx.base}/console/dead-letters/purge`, {
        method: 'POST',
        headers: bearer,
        body: new URLSearchParams(form),
      })
    ).text();
    expect(preview).toContain('data-dry-run="1"');
    expect((await fx.records.get('shop', POISON_ID))?.state).toBe('dead-lettered');
    const done = await (
      await fetch(`${fx.base}/console/dead-letters/purge`, {
        method: 'POST',
        headers: bearer,
        body: new URLSearchParams({ ...form, apply: '1' }),
      })
    ).text();
    expect(done).toContain('data-done="1"');
    const record = await fx.records.get('shop', POISON_ID);
    expect(record?.state).toBe('discarded');
    expect(record?.history.at(-1)).toMatchObject({ state: 'discarded', actor: 'console:alice' });
  });

  it('answers only under its base path, also when Express strips the mount path', async () => {
    await using fx = await startFixture();
    expect((await fetch(`${fx.base}/elsewhere`, { headers: bearer })).status).toBe(404);
    const ops = createConsole({
      records: fx.records,
      auth: { token: TOKEN },
      basePath: '/console',
    });
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      // What Express's app.use('/console', …) does to the request.
      Object.assign(req, {
        originalUrl: req.url,
        url: (req.url ?? '').slice('/console'.length) || '/',
      });
      ops.node(req, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/console/events?state=completed`, {
      headers: bearer,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('10 matching');
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("shows each transport's backlog on the overview", async () => {
    await using fx = await startFixture();
    const page = await (await fetch(`${fx.base}/console/`, { headers: bearer })).text();
    expect(page).toMatch(/<table data-backlog>[\s\S]*<td>orders<\/td><td>orders<\/td><td>0<\/td>/);
    expect(page).toContain('data-state="completed">completed<b>10</b>');
    expect(page).toContain('data-conflicts="0"');
    // A sender reuses an id with other bytes: the receiver records the conflict, the overview shows it.
    const { createEnvelope } = await import('@onceflow/core');
    const reused = createEnvelope({
      source: 'shop',
      id: 'evt_1',
      type: 'order.paid',
      payload: { amount: -1 },
    });
    expect((await fx.inbox.claim(reused, { leaseMs: 1000 })).status).toBe('conflict');
    await fx.inbox.recordConflict(reused); // as the receiver does on a conflict
    const after = await (await fetch(`${fx.base}/console/`, { headers: bearer })).text();
    expect(after).toContain('data-conflicts="1"');
  });

  it('replays completed events by id and by filter: a dry run with the count, then copies processed once each', async () => {
    await using fx = await startFixture();
    const csrf = csrfOf(
      await (await fetch(`${fx.base}/console/replay`, { headers: bearer })).text(),
    );
    const post = (form: Record<string, string>) =>
      fetch(`${fx.base}/console/replay`, {
        method: 'POST',
        headers: bearer,
        body: new URLSearchParams({ _csrf: csrf, ...form }),
      });
    const byId = await (await post({ ids: `shop/evt_3\nshop/${POISON_ID}\nshop/evt_nope` })).text();
    expect(byId).toContain('data-dry-run="1"');
    expect(byId).toContain('dead-lettered, not completed');
    expect(byId).toContain('no such event');
    const replayId = /name="replayId" value="([^"]+)"/.exec(byId)?.[1] ?? '';
    const done = await (await post({ ids: 'shop/evt_3', replayId, apply: '1' })).text();
    expect(done).toContain('data-done="1"');
    const copy = `evt_3#replay-${replayId}`;
    await waitFor(() => fx.runs.get(copy) === 1, 'the replayed copy processed');
    // The same replay id again publishes the same copy, which the record's guard drops.
    await post({ ids: 'shop/evt_3', replayId, apply: '1' });
    const byFilter = await (await post({ type: 'order.paid', newerThan: '1d' })).text();
    expect(byFilter).toContain('data-dry-run="10"');
    await new Promise((r) => setTimeout(r, 300));
    expect(fx.runs.get(copy)).toBe(1);
    expect(fx.runs.get('evt_3')).toBe(1);
  });

  it('rejects bad options with a clear error', () => {
    expect(() => createConsole({ records: {} as never, auth: { token: TOKEN } })).toThrow(
      /records/,
    );
    expect(() =>
      createConsole({ records: { list() {} } as never, auth: { token: 'short' } }),
    ).toThrow(/16 characters/);
  });
});
