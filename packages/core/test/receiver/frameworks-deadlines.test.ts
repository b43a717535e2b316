import { createServer, type Server } from 'node:http';
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
import { STRIPE_SECRET, slowClient, stripeEvent, stripeHeaders, until } from './helpers.js';

/**
 * A receiver with the one short deadline a test is about, so a slow client is cut off quickly;
 * the other stays long, as a stall of the machine could run a short one out first (once the
 * process runs again, the deadline's timer fires before the socket's waiting bytes are read).
 */
function newReceiver(deadline: { headersTimeoutMs: number } | { bodyTimeoutMs: number }): Receiver {
  return createReceiver({
    sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
    inbox: createMemoryStore(),
    transport: createMemoryTransport(),
    ...deadline,
  });
}

/** The README's way for each framework to take `receiver.serverOptions`. */
const frameworks: Record<
  string,
  (receiver: Receiver) => Promise<{ port: number; close: () => Promise<void> }>
> = {
  async hono(receiver) {
    const app = new Hono();
    app.post('/webhooks/:source', (c) => receiver.fetch(c.req.raw, c.req.param('source')));
    const server = await new Promise<Server>((resolve) => {
      const s = serve(
        { fetch: app.fetch, port: 0, hostname: '127.0.0.1', serverOptions: receiver.serverOptions },
        () => resolve(s as Server),
      );
    });
    return {
      port: (server.address() as AddressInfo).port,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  },
  async express(receiver) {
    const app = express();
    app.post('/webhooks/:source', (req, res) => receiver.node(req, res, req.params.source));
    const server = createServer(receiver.serverOptions, app);
    return listening(server);
  },
  async fastify(receiver) {
    let server: Server | undefined;
    const app = Fastify({
      serverFactory: (handler) => {
        server = createServer(receiver.serverOptions, handler);
        return server;
      },
    });
    app.register(async (webhooks) => {
      webhooks.removeAllContentTypeParsers();
      webhooks.addContentTypeParser('*', (_request, _payload, done) => done(null));
      webhooks.post<{ Params: { source: string } }>('/webhooks/:source', (request, reply) => {
        reply.hijack();
        return receiver.node(request.raw, reply.raw, request.params.source);
      });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    expect(server).toBeDefined();
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
  },
};

async function listening(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(Object.keys(frameworks))('%s with receiver.serverOptions', (name) => {
  const start = frameworks[name]!;

  it('answers 408 and closes the socket when the headers come too slowly', async () => {
    const app = await start(newReceiver({ headersTimeoutMs: 300 }));
    try {
      const lines = ['POST /webhooks/stripe HTTP/1.1\r\n', 'host: x\r\n'];
      for (let i = 0; i < 100; i++) lines.push(`x-slow-${i}: 1\r\n`);
      const { received, unsent } = await slowClient(app.port, lines, 50).closed;
      expect(received).toMatch(/^HTTP\/1\.1 408/);
      expect(unsent).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });

  it('answers 408 when the body comes too slowly, before the client is done sending', async () => {
    const app = await start(newReceiver({ bodyTimeoutMs: 300 }));
    try {
      const body = stripeEvent('evt_framework_slow');
      const lines = ['POST /webhooks/stripe HTTP/1.1', 'host: x', `content-length: ${body.length}`];
      for (const [k, v] of Object.entries(stripeHeaders(body))) lines.push(`${k}: ${v}`);
      const pieces = [`${lines.join('\r\n')}\r\n\r\n`, ...body.split('')];
      const client = slowClient(app.port, pieces, 50);
      await until(() => client.received().includes('{"status":"timeout"}'), 10_000);
      expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
      client.destroy();
      expect((await client.closed).unsent).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });
});
