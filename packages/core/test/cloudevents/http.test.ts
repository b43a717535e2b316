import { CloudEvent, HTTP, type Message } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import type { CloudEventJson } from '../../src/cloudevents/attributes.js';
import { fromCloudEvent, toCloudEvent } from '../../src/cloudevents/mapping.js';
import { cloudEvents } from '../../src/cloudevents/source.js';
import type { Envelope } from '../../src/envelope.js';
import { ConfigError } from '../../src/errors.js';
import { tenantSecrets } from '../../src/tenants/tenant-secrets.js';
import { startReceiver } from '../receiver/setup.js';

const TOKEN = 'ce-token-1';
const auth = { authorization: `Bearer ${TOKEN}` };

async function setup(config: Parameters<typeof cloudEvents>[0] = { secrets: [TOKEN] }) {
  const r = await startReceiver({ sources: { orders: cloudEvents(config) } });
  const url = `${r.server.url}/webhooks/orders`;
  const send = async (
    message: { headers: Record<string, unknown>; body: unknown },
    extra = auth,
  ) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...(message.headers as Record<string, string>), ...extra },
      body: message.body as string,
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const published = (): Envelope[] =>
    r.spies.publish.mock.calls.flatMap((c) => c[0].map((m) => m.envelope));
  return { r, url, send, published };
}

const orderEvent = (init: Partial<CloudEventJson> = {}) =>
  new CloudEvent({
    id: `A-${Math.random().toString(36).slice(2)}`,
    source: '/shop/orders',
    type: 'com.example.order.created',
    subject: 'order-42',
    time: '2026-12-07T10:00:00.000Z',
    data: { order: 42, total: 9.5 },
    tenantid: 'acme',
    ...init,
  });

/** The SDK's view of a CloudEvent (JSON format), to compare ours with. */
const sdkJson = (ce: CloudEventJson) => new CloudEvent({ ...ce }, false).toJSON();
/**
 * What the SDK itself reads from a message it emitted: binary mode carries the content type it
 * sent; in structured mode an absent `datacontenttype` means JSON (the JSON format's default),
 * which the envelope's `content-type` states.
 */
const sdkRead = (message: Message) => {
  const read = HTTP.toEvent(message) as CloudEvent;
  return { ...read.toJSON(), datacontenttype: read.datacontenttype ?? 'application/json' };
};

describe('CloudEvents HTTP binding as a source', () => {
  it.each([
    ['binary', HTTP.binary],
    ['structured', HTTP.structured],
  ] as const)(
    '%s mode: the SDK-emitted event becomes an envelope and maps back to itself',
    async (_mode, emit) => {
      const { r, send, published } = await setup();
      await using _ = r;
      const ce = orderEvent();
      const answer = await send(emit(ce));
      expect(answer).toEqual({
        status: 202,
        json: { status: 'accepted', id: `/shop/orders ${ce.id}` },
      });
      const [envelope] = published();
      expect(envelope).toMatchObject({
        id: `/shop/orders ${ce.id}`,
        source: 'orders',
        type: 'com.example.order.created',
        key: 'order-42',
        occurredAt: '2026-12-07T10:00:00.000Z',
      });
      expect(JSON.parse(Buffer.from(envelope!.payload).toString())).toEqual({
        order: 42,
        total: 9.5,
      });
      expect(envelope!.headers).toMatchObject({
        'ce-id': ce.id,
        'ce-source': '/shop/orders',
        'ce-subject': 'order-42',
        'ce-tenantid': 'acme',
        'content-type': expect.stringMatching(/^application\/json/),
      });
      expect(envelope!.headers.authorization).toBeUndefined();
      expect(sdkJson(toCloudEvent(envelope!))).toEqual(sdkRead(emit(ce)));
      // The same event again is a duplicate, whichever mode it comes in.
      expect((await send(HTTP.structured(ce))).status).toBe(200);
      expect((await send(HTTP.binary(ce))).status).toBe(200);
    },
  );

  it('a batch is one envelope per event, answered together; the same id from another source is no duplicate', async () => {
    const { r, send, published } = await setup();
    await using _ = r;
    const a = orderEvent();
    const b = orderEvent({ data: 'plain text', datacontenttype: 'text/plain' });
    const c = orderEvent({
      id: a.id,
      source: '/other/producer',
      data_base64: Buffer.from([0, 1, 255]).toString('base64'),
      datacontenttype: 'application/octet-stream',
      data: undefined,
    });
    const batch = {
      headers: { 'content-type': 'application/cloudevents-batch+json' },
      body: JSON.stringify([a, b, c].map((e) => e.toJSON())),
    };
    const answer = await send(batch);
    expect(answer.status).toBe(202);
    expect(answer.json.events).toEqual(
      [a, b, c].map((e) => ({ id: `${e.source} ${e.id}`, status: 'accepted' })),
    );
    const envelopes = published();
    expect(envelopes).toHaveLength(3);
    expect(Buffer.from(envelopes[1]!.payload).toString()).toBe('plain text');
    expect([...envelopes[2]!.payload]).toEqual([0, 1, 255]);
    for (const [i, e] of [a, b, c].entries()) {
      expect(sdkJson(toCloudEvent(envelopes[i]!))).toEqual(sdkRead(HTTP.structured(e)));
    }
    const again = await send(batch);
    expect(again.status).toBe(200);
    expect(published()).toHaveLength(3);
  });

  it('refuses a missing or wrong token (401) and a request that is no CloudEvent (400)', async () => {
    const { r, send, url } = await setup();
    await using _ = r;
    const message = HTTP.binary(orderEvent());
    expect((await send(message, { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await send(message, {} as typeof auth)).status).toBe(401);
    const viaQuery = await fetch(`${url}?access_token=${TOKEN}`, {
      method: 'POST',
      headers: message.headers as Record<string, string>,
      body: message.body as string,
    });
    expect(viaQuery.status).toBe(202);
    expect(
      (await send({ headers: { 'content-type': 'application/json' }, body: '{}' })).status,
    ).toBe(400);
    const v03 = HTTP.binary(orderEvent());
    expect(
      (await send({ ...v03, headers: { ...v03.headers, 'ce-specversion': '0.3' } })).status,
    ).toBe(400);
    expect(r.spies.claim).toHaveBeenCalledTimes(1);
  });

  it('answers the abuse-protection handshake: WebHook-Request-Origin → WebHook-Allowed-Origin', async () => {
    const { r, url } = await setup({
      secrets: [TOKEN],
      allowedOrigins: ['eventemitter.example.com'],
    });
    await using _ = r;
    const ok = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        'webhook-request-origin': 'eventemitter.example.com',
        'webhook-request-rate': '120',
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('webhook-allowed-origin')).toBe('eventemitter.example.com');
    expect(ok.headers.get('webhook-allowed-rate')).toBe('*');
    expect(ok.headers.get('allow')).toBe('POST');
    const other = await fetch(url, {
      method: 'OPTIONS',
      headers: { 'webhook-request-origin': 'evil.example' },
    });
    expect(other.status).toBe(403);
    expect(other.headers.get('webhook-allowed-origin')).toBeNull();
    expect((await fetch(url, { method: 'OPTIONS' })).status).toBe(405);
    expect(r.storeCalls()).toBe(0);
  });

  it('fromCloudEvent makes the envelope the receiver makes; toCloudEvent maps any envelope', async () => {
    const { r, send, published } = await setup({
      secrets: [TOKEN],
      dedupe: 'id',
      key: { extension: 'tenantid' },
    });
    await using _ = r;
    const ce = orderEvent();
    await send(HTTP.binary(ce));
    const received = published()[0]!;
    const made = fromCloudEvent(ce.toJSON() as CloudEventJson, {
      source: 'orders',
      dedupe: 'id',
      key: { extension: 'tenantid' },
    });
    expect({ ...made, receivedAt: '' }).toEqual({
      ...received,
      headers: made.headers,
      receivedAt: '',
    });
    expect(received.id).toBe(ce.id);
    expect(received.key).toBe('acme');

    const plain: Envelope = {
      ...received,
      id: 'evt_1',
      source: 'stripe',
      type: 'invoice.paid',
      key: 'cus_1',
      headers: {
        'content-type': 'application/json',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
    };
    const mapped = new CloudEvent({ ...toCloudEvent(plain) });
    expect(mapped).toMatchObject({
      id: 'evt_1',
      source: 'stripe',
      type: 'invoice.paid',
      partitionkey: 'cus_1',
      traceparent: plain.headers.traceparent,
    });
    expect(mapped.data).toEqual({ order: 42, total: 9.5 });
  });

  it('takes per-tenant tokens through tenantSecrets', async () => {
    const source = tenantSecrets((secrets) => cloudEvents({ secrets }), {
      secrets: async ({ tenant }) => (tenant === 'acme' ? ['acme-token'] : ['other-token']),
    });
    await using r = await startReceiver({
      sources: { orders: source },
      config: { pathPrefix: '/ce' },
    });
    const message = HTTP.binary(orderEvent());
    const post = (tenant: string, token: string) =>
      fetch(`${r.server.url}/ce/orders/${tenant}`, {
        method: 'POST',
        headers: {
          ...(message.headers as Record<string, string>),
          authorization: `Bearer ${token}`,
        },
        body: message.body as string,
      });
    expect((await post('globex', 'acme-token')).status).toBe(401);
    expect((await post('acme', 'acme-token')).status).toBe(202);
    const handshake = await fetch(`${r.server.url}/ce/orders/acme`, {
      method: 'OPTIONS',
      headers: { 'webhook-request-origin': 'producer.example' },
    });
    expect(handshake.headers.get('webhook-allowed-origin')).toBe('producer.example');
  });

  it('needs a token or an explicit unauthenticated: true', () => {
    expect(() => cloudEvents({})).toThrow(ConfigError);
    expect(() => cloudEvents({ unauthenticated: true })).not.toThrow();
  });
});
