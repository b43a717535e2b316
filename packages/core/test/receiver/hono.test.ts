import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { createReceiver, type Receiver } from '../../src/receiver/index.js';
import { stripe } from '../../src/verify/stripe.js';
import {
  postStripe,
  rawHead,
  rawPost,
  STRIPE_SECRET,
  slowClient,
  stripeEvent,
  stripeHeaders,
  until,
} from './helpers.js';

/**
 * A receiver that refuses bodies over 1 KiB, with the default deadlines unless told: a request
 * answered in time by a short deadline would lose the race to a stall of the machine (once the
 * process runs again, the deadline's timer fires before the socket's waiting bytes are read).
 */
function newReceiver(deadlines: { bodyTimeoutMs?: number } = {}): Receiver {
  return createReceiver({
    sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
    inbox: createMemoryStore(),
    transport: createMemoryTransport(),
    maxBodyBytes: 1024,
    ...deadlines,
  });
}

/** `app` on @hono/node-server with the receiver's server options; `await using` closes it. */
async function served(receiver: Receiver, app: Hono) {
  const server = await new Promise<Server>((resolve) => {
    const s = serve(
      { fetch: app.fetch, port: 0, hostname: '127.0.0.1', serverOptions: receiver.serverOptions },
      () => resolve(s as Server),
    );
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The README's one-liner. */
function oneLiner(receiver: Receiver): Hono {
  const app = new Hono();
  app.post('/webhooks/:source', (c) => receiver.hono(c));
  return app;
}

describe('receiver.hono on @hono/node-server', () => {
  it('sees the raw bytes: 202, then 200 for the retry', async () => {
    await using s = await served(...withApp(oneLiner));
    const body = JSON.stringify(
      { id: 'evt_hono', object: 'event', type: 'a.b', created: 1 },
      null,
      2,
    ).replace('"created": 1', `"created": ${Math.floor(Date.now() / 1000)}`);
    const url = `${s.origin}/webhooks/stripe`;
    expect(await postStripe(url, body)).toMatchObject({
      status: 202,
      json: { status: 'accepted', id: 'evt_hono' },
    });
    expect(await postStripe(url, body)).toMatchObject({
      status: 200,
      json: { status: 'duplicate' },
    });
  });

  it('answers 401, 404 and 413 as the receiver decides', async () => {
    await using s = await served(...withApp(oneLiner));
    const url = `${s.origin}/webhooks/stripe`;
    expect((await postStripe(url, stripeEvent('evt_x'), { secret: 'whsec_wrong' })).status).toBe(
      401,
    );
    expect((await postStripe(`${s.origin}/webhooks/nope`, '{}')).status).toBe(404);
    const big = stripeEvent(`evt_${'x'.repeat(2048)}`);
    const res = await postStripe(url, big);
    expect(res.status).toBe(413);
    expect(res.headers.get('connection')).toBe('close');
  });

  it('answers 413 to an endless chunked body (nothing buffers it to the end)', async () => {
    await using s = await served(...withApp(oneLiner));
    const head = rawHead([
      'POST /webhooks/stripe HTTP/1.1',
      'host: x',
      'transfer-encoding: chunked',
      'content-type: application/json',
    ]);
    const res = await rawPost(s.origin, head, Buffer.alloc(512, 0x20));
    expect(res.head).toMatch(/^http\/1\.1 413/);
  });

  it('answers 408 when the body comes too slowly, before the client is done sending', async () => {
    await using s = await served(
      ...withApp(oneLiner, undefined, newReceiver({ bodyTimeoutMs: 300 })),
    );
    const body = stripeEvent('evt_hono_slow');
    const lines = ['POST /webhooks/stripe HTTP/1.1', 'host: x', `content-length: ${body.length}`];
    for (const [k, v] of Object.entries(stripeHeaders(body))) lines.push(`${k}: ${v}`);
    const client = slowClient(s.port, [`${lines.join('\r\n')}\r\n\r\n`, ...body.split('')], 50);
    await until(() => client.received().includes('{"status":"timeout"}'), 10_000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
    client.destroy();
    expect((await client.closed).unsent).toBeGreaterThan(0);
  });

  it('reads c.req.raw when a middleware already started reading the body', async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      void c.req.raw.body; // builds the web Request, whose stream then reads the node request
      await new Promise((r) => setTimeout(r, 10));
      await next();
    });
    await using s = await served(...withApp(() => app, app));
    const url = `${s.origin}/webhooks/stripe`;
    expect(await postStripe(url, stripeEvent('evt_touched'))).toMatchObject({
      status: 202,
      json: { status: 'accepted', id: 'evt_touched' },
    });
  });

  it('answers 500 at once when a middleware consumed the body', async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      await c.req.text();
      await next();
    });
    await using s = await served(...withApp(() => app, app));
    expect((await postStripe(`${s.origin}/webhooks/stripe`, stripeEvent('evt_read'))).status).toBe(
      500,
    );
  });

  it('takes the source from the argument, as fetch does', async () => {
    const receiver = newReceiver();
    const app = new Hono();
    app.post('/hooks/:name/in', (c) => receiver.hono(c, c.req.param('name')));
    await using s = await served(receiver, app);
    expect((await postStripe(`${s.origin}/hooks/stripe/in`, stripeEvent('evt_named'))).status).toBe(
      202,
    );
  });
});

describe('receiver.hono elsewhere (no node request in c.env)', () => {
  it('answers the web Request as fetch does', async () => {
    const receiver = newReceiver();
    const app = oneLiner(receiver);
    const body = stripeEvent('evt_web');
    const send = () =>
      app.request('http://x/webhooks/stripe', {
        method: 'POST',
        headers: stripeHeaders(body),
        body,
      });
    const first = await send();
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({ status: 'accepted', id: 'evt_web' });
    expect((await send()).status).toBe(200);
  });
});

/** A receiver (fresh unless given) and the app built on it (or `app` when the route is added here). */
function withApp(
  build: (r: Receiver) => Hono,
  app?: Hono,
  receiver = newReceiver(),
): [Receiver, Hono] {
  const built = build(receiver);
  if (app !== undefined) app.post('/webhooks/:source', (c) => receiver.hono(c));
  return [receiver, built];
}
