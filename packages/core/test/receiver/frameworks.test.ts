import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { createReceiver, type Receiver } from '../../src/receiver/index.js';
import { stripe } from '../../src/verify/stripe.js';
import { postStripe, rawHead, rawPost, STRIPE_SECRET } from './helpers.js';

/** A fresh receiver over the memory stores, with a 1 KiB body limit. */
function newReceiver(): Receiver {
  return createReceiver({
    sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
    inbox: createMemoryStore(),
    transport: createMemoryTransport(),
    maxBodyBytes: 1024,
  });
}

/** The one-liners from the README, each on a real server. */
const frameworks: Record<
  string,
  (receiver: Receiver) => Promise<{ origin: string; close: () => Promise<void> }>
> = {
  async hono(receiver) {
    const app = new Hono();
    app.post('/webhooks/:source', (c) => receiver.fetch(c.req.raw, c.req.param('source')));
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () =>
        resolve(s as Server),
      );
    });
    return nodeServer(server);
  },
  async express(receiver) {
    const app = express();
    app.post('/webhooks/:source', (req, res) => receiver.node(req, res, req.params.source));
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    return nodeServer(server);
  },
  async fastify(receiver) {
    const app = Fastify();
    app.register(async (webhooks) => {
      webhooks.removeAllContentTypeParsers();
      webhooks.addContentTypeParser('*', (_request, _payload, done) => done(null));
      webhooks.post<{ Params: { source: string } }>('/webhooks/:source', (request, reply) => {
        reply.hijack();
        return receiver.node(request.raw, reply.raw, request.params.source);
      });
    });
    app.post('/api/echo', async (request) => request.body); // outside the plugin: JSON as usual
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { origin: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
};

function nodeServer(server: Server) {
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A Stripe body laid out as Stripe sends it (pretty-printed): any re-serialisation breaks the signature. */
const prettyEvent = (id: string) =>
  JSON.stringify(
    {
      id,
      object: 'event',
      type: 'invoice.paid',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: 'in_1' } },
    },
    null,
    2,
  );

describe.each(Object.keys(frameworks))('%s one-liner', (name) => {
  const start = async () => {
    const server = await frameworks[name]!(newReceiver());
    return {
      ...server,
      url: `${server.origin}/webhooks/stripe`,
      [Symbol.asyncDispose]: server.close,
    };
  };

  it('sees the raw bytes: 202, then 200 for the retry', async () => {
    await using s = await start();
    const body = prettyEvent(`evt_${name}`);
    expect(await postStripe(s.url, body)).toMatchObject({
      status: 202,
      json: { status: 'accepted', id: `evt_${name}` },
    });
    expect(await postStripe(s.url, body)).toMatchObject({
      status: 200,
      json: { status: 'duplicate' },
    });
  });

  it('answers 401, 404 and 413 as the receiver decides', async () => {
    await using s = await start();
    expect((await postStripe(s.url, prettyEvent('evt_x'), { secret: 'whsec_wrong' })).status).toBe(
      401,
    );
    expect((await postStripe(`${s.origin}/webhooks/nope`, '{}')).status).toBe(404);
    const big = prettyEvent(`evt_${'x'.repeat(2048)}`);
    const res = await fetch(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(res.status).toBe(413);
  });

  it('answers 413 to an endless chunked body (nothing buffers it to the end)', async () => {
    await using s = await start();
    const head = rawHead([
      'POST /webhooks/stripe HTTP/1.1',
      'host: x',
      'transfer-encoding: chunked',
      'content-type: application/json',
    ]);
    const res = await rawPost(s.origin, head, Buffer.alloc(512, 0x20));
    expect(res.head).toMatch(/^http\/1\.1 413/);
  });
});

describe('framework pitfalls', () => {
  it('fastify keeps parsing JSON outside the webhook plugin', async () => {
    const server = await frameworks.fastify!(newReceiver());
    try {
      const res = await fetch(`${server.origin}/api/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      expect(await res.json()).toEqual({ a: 1 });
    } finally {
      await server.close();
    }
  });

  it('express with a body parser in front answers 500 at once instead of hanging', async () => {
    const receiver = newReceiver();
    const app = express();
    app.use(express.json());
    app.post('/webhooks/:source', (req, res) => receiver.node(req, res, req.params.source));
    const server = nodeServer(
      await new Promise<Server>((resolve) => {
        const s = app.listen(0, '127.0.0.1', () => resolve(s));
      }),
    );
    try {
      const res = await postStripe(`${server.origin}/webhooks/stripe`, prettyEvent('evt_parsed'));
      expect(res.status).toBe(500);
    } finally {
      await server.close();
    }
  });
});
