import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { createReceiver } from '../../src/receiver/index.js';
import { stripe } from '../../src/verify/stripe.js';
import {
  postStripe,
  STRIPE_SECRET,
  slowClient,
  stripeEvent,
  stripeHeaders,
  until,
} from './helpers.js';
import { startReceiver } from './setup.js';

const portOf = (url: string) => Number(new URL(url).port);

/** A Stripe delivery's request head (blank line included), for a body of `length` bytes. */
function head(body: string): string {
  const lines = ['POST /webhooks/stripe HTTP/1.1', 'host: x', `content-length: ${body.length}`];
  for (const [name, value] of Object.entries(stripeHeaders(body))) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

describe('header deadline (headersTimeoutMs, through receiver.serverOptions)', () => {
  it('answers 408 and closes the socket when the headers come too slowly', async () => {
    await using r = await startReceiver({ config: { headersTimeoutMs: 300 } });
    const lines = ['POST /webhooks/stripe HTTP/1.1\r\n', 'host: x\r\n'];
    for (let i = 0; i < 100; i++) lines.push(`x-slow-${i}: 1\r\n`);
    const client = slowClient(portOf(r.server.url), lines, 50);

    const { received, unsent } = await client.closed;
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(unsent).toBeGreaterThan(0); // the server closed it, not the client
    expect(r.storeCalls()).toBe(0);
  });

  it('answers 408 and closes a connection that never sends a request', async () => {
    await using r = await startReceiver({ config: { headersTimeoutMs: 300 } });
    const client = slowClient(portOf(r.server.url), [], 50);
    const { received } = await client.closed;
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('derives the node:http options from the config, with documented defaults', () => {
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
      inbox: createMemoryStore(),
      transport: createMemoryTransport(),
    });
    expect(receiver.serverOptions).toEqual({
      headersTimeout: 10_000,
      requestTimeout: 21_000,
      connectionsCheckingInterval: 1_000,
    });
  });
});

describe('body deadline (bodyTimeoutMs)', () => {
  it('answers 408, closes the socket and stores nothing when a signed body comes too slowly', async () => {
    await using r = await startReceiver({ config: { bodyTimeoutMs: 400 } });
    const body = stripeEvent('evt_slow_body');
    const pieces = [head(body), ...body.split('')]; // one byte every 50 ms: ~10 s for the body
    const client = slowClient(portOf(r.server.url), pieces, 50);

    const { received, unsent } = await client.closed;
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(received.toLowerCase()).toContain('connection: close');
    expect(received).toContain('{"status":"timeout"}');
    expect(unsent).toBeGreaterThan(0);
    expect(r.storeCalls()).toBe(0);
    expect(await r.count('webhooksReceived', { outcome: 'timeout' })).toBe(1);
  });

  it('accepts a body that arrives in pieces within the deadline', async () => {
    await using r = await startReceiver({ config: { bodyTimeoutMs: 10_000 } });
    const body = stripeEvent('evt_pieces');
    const third = Math.ceil(body.length / 3);
    const pieces = [head(body), body.slice(0, third), body.slice(third, 2 * third)];
    pieces.push(body.slice(2 * third));
    const client = slowClient(portOf(r.server.url), pieces, 30);
    await until(() => client.received().includes('\r\n\r\n'), 10_000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 202/);
    expect(r.spies.markEnqueued).toHaveBeenCalledTimes(1);
    client.destroy();
  });

  it('answers 408 on the fetch path and cancels the stream', async () => {
    let cancelled = false;
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
      inbox: createMemoryStore(),
      transport: createMemoryTransport(),
      bodyTimeoutMs: 200,
    });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"id":'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request('http://x/webhooks/stripe', {
      method: 'POST',
      body,
      duplex: 'half',
    } as RequestInit);
    const res = await receiver.fetch(request);
    expect(res.status).toBe(408);
    expect(await res.json()).toEqual({ status: 'timeout' });
    expect(cancelled).toBe(true);
  });
});

describe('cap on unfinished bodies (maxConcurrentBodies)', () => {
  it('answers 503 overloaded with Retry-After beyond the cap, and takes requests again once slots free', async () => {
    await using r = await startReceiver({ config: { maxConcurrentBodies: 2, retryAfterSec: 7 } });
    let requests = 0;
    r.server.server.prependListener('request', () => requests++);
    const body = stripeEvent('evt_held');
    const holders = [1, 2].map(() =>
      slowClient(portOf(r.server.url), [head(body), body.slice(0, 10)], 10),
    );
    await until(() => requests === 2, 10_000);

    const refused = await postStripe(r.url, stripeEvent('evt_refused'));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('7');
    expect(refused.json).toEqual({ status: 'overloaded' });
    expect(r.spies.claim).not.toHaveBeenCalled();

    for (const h of holders) h.destroy();
    await Promise.all(holders.map((h) => h.closed));
    await until(
      async () => (await postStripe(r.url, stripeEvent('evt_later'))).status === 202,
      10_000,
    );
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
  });
});

describe('deadline config', () => {
  it('refuses non-positive deadlines and caps', () => {
    const base = {
      sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
      inbox: createMemoryStore(),
      transport: createMemoryTransport(),
    };
    expect(() => createReceiver({ ...base, headersTimeoutMs: 0 })).toThrow(ConfigError);
    expect(() => createReceiver({ ...base, bodyTimeoutMs: -1 })).toThrow(/bodyTimeoutMs/);
    expect(() => createReceiver({ ...base, maxConcurrentBodies: 1.5 })).toThrow(ConfigError);
  });
});
