import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { createReceiver } from '../../src/receiver/index.js';
import { stripe } from '../../src/verify/stripe.js';
import { rawHead, rawPost, STRIPE_SECRET } from './helpers.js';
import { startReceiver } from './setup.js';

const LIMIT = 32 * 1024;

describe('body size limit', () => {
  it('answers 413 from Content-Length alone, before any body byte arrives', async () => {
    await using r = await startReceiver({ config: { maxBodyBytes: LIMIT } });
    const res = await rawPost(
      r.server.url,
      rawHead(['POST /webhooks/stripe HTTP/1.1', 'host: x', `content-length: ${LIMIT + 1}`]),
    );

    expect(res.head).toMatch(/^http\/1\.1 413/);
    expect(res.head).toContain('connection: close');
    await res.closedByServer;
    expect(r.storeCalls()).toBe(0);
  });

  it('answers 413 to an endless chunked body, having read little past the limit', async () => {
    await using r = await startReceiver({ config: { maxBodyBytes: LIMIT } });
    let readAtAnswer = 0;
    r.server.server.prependListener('request', (req, res) => {
      res.on('finish', () => {
        readAtAnswer = req.socket?.bytesRead ?? Number.NaN;
      });
    });
    const res = await rawPost(
      r.server.url,
      rawHead(['POST /webhooks/stripe HTTP/1.1', 'host: x', 'transfer-encoding: chunked']),
      Buffer.alloc(4096, 0x61),
    );

    expect(res.head).toMatch(/^http\/1\.1 413/);
    await res.closedByServer;
    expect(res.sent).toBeGreaterThan(LIMIT);
    expect(readAtAnswer).toBeGreaterThan(LIMIT);
    expect(readAtAnswer).toBeLessThan(LIMIT + 256 * 1024);
    expect(r.storeCalls()).toBe(0);
  });

  it('answers 404 to an unknown source without reading the body', async () => {
    await using r = await startReceiver();
    const res = await rawPost(
      r.server.url,
      rawHead(['POST /webhooks/nope HTTP/1.1', 'host: x', 'content-length: 1000']),
    );

    expect(res.head).toMatch(/^http\/1\.1 404/);
    await res.closedByServer;
  });

  it('keeps the connection open after an answer whose body was read', async () => {
    await using r = await startReceiver();
    const res = await rawPost(
      r.server.url,
      `${rawHead(['POST /webhooks/stripe HTTP/1.1', 'host: x', 'content-length: 2'])}\r\n{}`,
    );
    expect(res.head).toMatch(/^http\/1\.1 401/);
    expect(res.head).not.toContain('connection: close');
  });
});

describe('body size limit on the fetch path', () => {
  const receiver = createReceiver({
    sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
    inbox: createMemoryStore(),
    transport: createMemoryTransport(),
    maxBodyBytes: LIMIT,
  });

  it('stops pulling an endless stream just past the limit', async () => {
    let pulled = 0;
    const chunk = new Uint8Array(4096);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const request = new Request('http://x/webhooks/stripe', {
      method: 'POST',
      body,
      duplex: 'half',
    } as RequestInit);
    const res = await receiver.fetch(request);

    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ status: 'too-large' });
    expect(pulled).toBeLessThanOrEqual(LIMIT + 2 * chunk.byteLength);
  });

  it('answers 413 from Content-Length without reading the body', async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1));
      },
    });
    const request = new Request('http://x/webhooks/stripe', {
      method: 'POST',
      headers: { 'content-length': String(LIMIT + 1) },
      body,
      duplex: 'half',
    } as RequestInit);
    const res = await receiver.fetch(request);

    expect(res.status).toBe(413);
    expect(pulled).toBeLessThanOrEqual(1); // a stream may pull once ahead on creation; nothing is read
  });

  it('answers 500 at once when something read the body before the receiver', async () => {
    const request = new Request('http://x/webhooks/stripe', { method: 'POST', body: '{}' });
    await request.text();
    expect((await receiver.fetch(request)).status).toBe(500);
  });

  it('takes the source from the last path segment', async () => {
    const res = await receiver.fetch(new Request('http://x/hooks/v1/unknown/', { method: 'POST' }));
    expect(res.status).toBe(404);
    const ok = await receiver.fetch(new Request('http://x/hooks/stripe?x=1', { method: 'POST' }));
    expect(ok.status).toBe(401);
  });
});
