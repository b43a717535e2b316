import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/index.js';
import { POISON_ID, TOKEN, startFixture } from './fixture.js';

const bearer = { authorization: `Bearer ${TOKEN}` };

describe('mounted in an existing app, as the README shows', () => {
  it('Express: app.use(basePath, console.node)', async () => {
    await using fx = await startFixture();
    const ops = createConsole({
      records: fx.records,
      auth: { token: TOKEN },
      basePath: '/console',
    });
    const app = express();
    app.get('/', (_req, res) => {
      res.send('the app');
    });
    app.use('/console', ops.node);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect(await (await fetch(`${base}/`)).text()).toBe('the app');
    const page = await fetch(`${base}/console/dead-letters`, { headers: bearer });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(POISON_ID);
    expect((await fetch(`${base}/console/`, { headers: bearer })).status).toBe(200);
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("Hono: app.all('/ops/*', (c) => console.fetch(c.req.raw))", async () => {
    await using fx = await startFixture();
    const ops = createConsole({
      records: fx.records,
      auth: { token: TOKEN },
      basePath: '/ops',
    });
    const app = new Hono();
    app.get('/', (c) => c.text('the app'));
    app.all('/ops/*', (c) => ops.fetch(c.req.raw));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const page = await fetch(`${base}/ops/events/shop/${POISON_ID}`, { headers: bearer });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('dead-lettered');
    expect((await fetch(`${base}/ops/`, { headers: bearer })).status).toBe(200);
    await new Promise<void>((r) => server.close(() => r()));
  });
});
