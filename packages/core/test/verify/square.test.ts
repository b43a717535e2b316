import { createHmac } from 'node:crypto';
import { WebhooksHelper } from 'square';
import { describe, expect, it } from 'vitest';
import { SignatureError } from '../../src/errors.js';
import { square } from '../../src/verify/index.js';
import { webhook } from './fixtures.js';

// Each signature is first accepted by Square's own SDK (`WebhooksHelper.verifySignature`).
const KEY = 'sq-signature-key-1';
const URL_ = 'https://hooks.example.test/webhooks/square';
const body = JSON.stringify({
  merchant_id: '6SSW7HV8K2ST5',
  type: 'payment.updated',
  event_id: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc',
  created_at: '2025-06-01T11:59:58.123Z',
  data: { type: 'payment', id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY', object: {} },
});

async function signed(payload = body, key = KEY, url = URL_) {
  const signature = createHmac('sha256', key)
    .update(url + payload)
    .digest('base64');
  const sdk = await WebhooksHelper.verifySignature({
    requestBody: payload,
    signatureHeader: signature,
    signatureKey: KEY,
    notificationUrl: URL_,
  });
  expect(sdk).toBe(key === KEY && url === URL_);
  return webhook({
    url: URL_,
    body: payload,
    headers: { 'x-square-hmacsha256-signature': signature },
  });
}

describe('square', () => {
  const { verifier } = square({ secrets: [KEY] });
  const now = new Date();

  it('verifies a notification the SDK accepts and reads id, type, key, time', async () => {
    expect(verifier.verify(await signed(), now)).toEqual([
      {
        eventId: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc',
        type: 'payment.updated',
        key: 'KkAkhdMsgzn59SM8A89WgKwekxLZY',
        occurredAt: '2025-06-01T11:59:58.123Z',
      },
    ]);
  });

  it('rejects one changed body byte, a wrong key, another notification URL', async () => {
    const request = await signed();
    const changed = Buffer.from(request.body);
    changed[8] = changed[8]! ^ 1;
    expect(() => verifier.verify({ ...request, body: changed }, now)).toThrow(SignatureError);
    const wrong = await signed(body, 'other-key');
    expect(() => verifier.verify(wrong, now)).toThrow(SignatureError);
    const elsewhere = await signed(body, KEY, 'https://other.example.test/hook');
    expect(() => verifier.verify(elsewhere, now)).toThrow(SignatureError);
  });

  it('uses the configured notification URL behind a proxy, and any key while rotating', async () => {
    const inside = { ...(await signed()), url: new URL('http://10.0.0.5:8080/webhooks/square') };
    expect(() => verifier.verify(inside, now)).toThrow(SignatureError);
    const proxied = square({ secrets: ['new', KEY], notificationUrl: URL_ }).verifier;
    expect(proxied.verify(inside, now)).toHaveLength(1);
  });
});
