import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConfigError, SignatureError } from '../../src/errors.js';
import { shopify } from '../../src/verify/index.js';
import { awkwardJson, webhook } from './fixtures.js';

const SECRET = 'shpss_current';
const OLD = 'shpss_previous';
const now = new Date('2025-06-01T12:00:00Z');
const order = JSON.stringify({
  id: 820982911946154500,
  admin_graphql_api_id: 'gid://shopify/Order/8209',
  total_price: '10.00',
});

/** Signed as Shopify documents it: base64(HMAC-SHA256(client secret, raw body)). */
function signed(body: string | Uint8Array, secret = SECRET, extra: Record<string, string> = {}) {
  return webhook({
    body,
    headers: {
      'x-shopify-hmac-sha256': createHmac('sha256', secret).update(body).digest('base64'),
      'x-shopify-topic': 'orders/create',
      'x-shopify-event-id': '98880550-7158-44d4-b7cd-2c97c8a091b5',
      'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      'x-shopify-triggered-at': '2025-06-01T11:59:58.123456789Z',
      ...extra,
    },
  });
}

describe('shopify', () => {
  const { verifier } = shopify({ secrets: [SECRET] });

  it('verifies a delivery and reads id, topic, key, time', () => {
    expect(verifier.verify(signed(order), now)).toEqual([
      {
        eventId: '98880550-7158-44d4-b7cd-2c97c8a091b5',
        type: 'orders/create',
        key: 'gid://shopify/Order/8209',
        occurredAt: '2025-06-01T11:59:58.123Z',
      },
    ]);
  });

  it('falls back to X-Shopify-Webhook-Id, and answers BadRequest without either id or topic', () => {
    const request = signed(order);
    const { 'x-shopify-event-id': _, ...webhookIdOnly } = request.headers;
    expect(verifier.verify({ ...request, headers: webhookIdOnly }, now)[0]?.eventId).toBe(
      'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
    );
    const { 'x-shopify-webhook-id': __, ...noId } = webhookIdOnly;
    expect(() => verifier.verify({ ...request, headers: noId }, now)).toThrow(BadRequestError);
    const { 'x-shopify-topic': ___, ...noTopic } = request.headers;
    expect(() => verifier.verify({ ...request, headers: noTopic }, now)).toThrow(BadRequestError);
  });

  it('accepts a verified non-JSON (XML) body, without a key', () => {
    const xml = '<?xml version="1.0"?><order><id>1</id></order>';
    expect(verifier.verify(signed(xml), now)[0]).toMatchObject({
      type: 'orders/create',
      key: undefined,
    });
  });

  it('rejects a tampered body, a wrong secret, a missing or malformed header', () => {
    const request = signed(order);
    const tampered = { ...request, body: new TextEncoder().encode(order.replace('10.00', '0.01')) };
    expect(() => verifier.verify(tampered, now)).toThrow(SignatureError);
    expect(() => verifier.verify(signed(order, 'other'), now)).toThrow(SignatureError);
    const { 'x-shopify-hmac-sha256': _, ...unsigned } = request.headers;
    expect(() => verifier.verify({ ...request, headers: unsigned }, now)).toThrow(SignatureError);
    const hex = createHmac('sha256', SECRET).update(order).digest('hex');
    const wrongEncoding = {
      ...request,
      headers: { ...request.headers, 'x-shopify-hmac-sha256': hex },
    };
    expect(() => verifier.verify(wrongEncoding, now)).toThrow(SignatureError);
  });

  it('accepts any configured secret while rotating', () => {
    expect(
      shopify({ secrets: [SECRET, OLD] }).verifier.verify(signed(order, OLD), now),
    ).toHaveLength(1);
  });

  it('verifies raw bytes exactly, even bytes that are not UTF-8', () => {
    const body = awkwardJson('"id":5');
    expect(verifier.verify(signed(body), now)[0]?.key).toBe('5');
    const request = {
      ...signed(body),
      body: new TextEncoder().encode(JSON.stringify(JSON.parse(body))),
    };
    expect(() => verifier.verify(request, now)).toThrow(SignatureError);
    const binary = new Uint8Array([0xff, 0xfe, 0x00, 0x7b]);
    expect(verifier.verify(signed(binary), now)[0]?.key).toBeUndefined();
  });

  it('refuses bad config', () => {
    expect(() => shopify({ secrets: [] })).toThrow(ConfigError);
  });
});
