import { describe, expect, it } from 'vitest';
import type { Source } from '../../src/contracts/source.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { createReceiver } from '../../src/receiver/index.js';
import { msgraph } from '../../src/verify/msgraph.js';
import { slack } from '../../src/verify/slack.js';
import { stripe } from '../../src/verify/stripe.js';
import { postStripe, STRIPE_SECRET, stripeEvent, stripeHeaders } from './helpers.js';
import { startReceiver } from './setup.js';

const OTHER_METHODS = ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A sender whose handshake is a GET challenge (the way Twitter's CRC or Meta's hub.challenge work). */
const crcSender: Source = {
  preset: {
    ...stripe({ secrets: [STRIPE_SECRET] }).preset,
    name: 'crc',
    handshakeMethods: ['GET'],
  },
  verifier: {
    handshake(request) {
      const token = request.url.searchParams.get('crc_token');
      if (request.method !== 'GET' || token === null) return undefined;
      return { status: 200, headers: { 'content-type': 'text/plain' }, body: `crc:${token}` };
    },
    verify: stripe({ secrets: [STRIPE_SECRET] }).verifier.verify,
  },
};

describe('POST only', () => {
  it('answers every other method 405 with Allow: POST, signed or not, and stores nothing', async () => {
    await using r = await startReceiver();
    const body = stripeEvent('evt_method');
    for (const method of OTHER_METHODS) {
      const res = await fetch(r.url, {
        method,
        headers: stripeHeaders(body),
        ...(method === 'GET' ? {} : { body }),
      });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toEqual({ status: 'method-not-allowed' });
    }
    const headRes = await fetch(r.url, { method: 'HEAD' });
    expect(headRes.status).toBe(405);
    expect(headRes.headers.get('allow')).toBe('POST');
    expect(r.storeCalls()).toBe(0);
    expect(await r.count('webhooksReceived', { outcome: 'method-not-allowed' })).toBe(6);
    expect((await postStripe(r.url, body)).status).toBe(202);
  });

  it('answers 405 on the fetch path too', async () => {
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
      inbox: createMemoryStore(),
      transport: createMemoryTransport(),
    });
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await receiver.fetch(new Request('http://x/webhooks/stripe', { method }));
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('answers an unknown source 404 whatever the method', async () => {
    await using r = await startReceiver();
    const res = await fetch(`${r.server.url}/webhooks/nope`, { method: 'GET' });
    expect(res.status).toBe(404);
  });

  it("keeps the built-in handshakes, all POSTs: Graph's validationToken and Slack's url_verification", async () => {
    await using r = await startReceiver({
      sources: { graph: msgraph({ clientStates: ['cs'] }), slack: slack({ secrets: ['s3cr3t'] }) },
    });
    const graph = `${r.server.url}/webhooks/graph?validationToken=abc`;
    const ok = await fetch(graph, { method: 'POST' });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('abc');
    const get = await fetch(graph, { method: 'GET' });
    expect(get.status).toBe(405);
    expect((await fetch(`${r.server.url}/webhooks/slack`, { method: 'GET' })).status).toBe(405);
  });
});

describe("a sender's declared handshake method", () => {
  it('answers the handshake on that method and 405 to anything else on it', async () => {
    await using r = await startReceiver({ sources: { crc: crcSender } });
    const url = `${r.server.url}/webhooks/crc`;

    const challenge = await fetch(`${url}?crc_token=t0k`);
    expect(challenge.status).toBe(200);
    expect(await challenge.text()).toBe('crc:t0k');

    const plain = await fetch(url);
    expect(plain.status).toBe(405);
    expect(plain.headers.get('allow')).toBe('POST, GET');
    expect((await fetch(url, { method: 'PUT', body: 'x' })).status).toBe(405);

    expect((await postStripe(url, stripeEvent('evt_crc'))).status).toBe(202);
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
  });
});
