import { createHmac } from 'node:crypto';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { describe, expect, it } from 'vitest';
import { SignatureError } from '../../src/errors.js';
import { linear } from '../../src/verify/index.js';
import { webhook } from './fixtures.js';

// Each signature is first accepted by Linear's own SDK (`LinearWebhookClient.verify`, which also
// checks the signed webhookTimestamp against the real clock).
const SECRET = 'lin_wh_secret_1';

function payload(at = Date.now()) {
  return JSON.stringify({
    action: 'create',
    type: 'Issue',
    createdAt: '2025-06-01T11:59:58.123Z',
    webhookId: 'b5f2c0e4-7f0e-4e2a-9c59-8f1a0b1c2d3e',
    webhookTimestamp: at,
    data: { id: '2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9', title: 'Refund' },
  });
}

function signed(body = payload(), secret = SECRET) {
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  if (secret === SECRET) {
    expect(new LinearWebhookClient(SECRET).verify(Buffer.from(body), signature)).toBe(true);
  }
  return webhook({
    body,
    headers: {
      'linear-signature': signature,
      'linear-delivery': '234d1a4e-b617-4388-90fe-adc3633d6b72',
      'linear-event': 'Issue',
    },
  });
}

describe('linear', () => {
  const { verifier } = linear({ secrets: [SECRET] });

  it('verifies a delivery the SDK accepts and reads id, type, key, time', () => {
    expect(verifier.verify(signed(), new Date())).toEqual([
      {
        eventId: '234d1a4e-b617-4388-90fe-adc3633d6b72',
        type: 'Issue.create',
        key: '2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9',
        occurredAt: '2025-06-01T11:59:58.123Z',
      },
    ]);
  });

  it('rejects one changed body byte, a wrong secret, a stale webhookTimestamp', () => {
    const request = signed();
    const changed = Buffer.from(request.body);
    changed[3] = changed[3]! ^ 1;
    expect(() => verifier.verify({ ...request, body: changed }, new Date())).toThrow(
      SignatureError,
    );
    expect(() => verifier.verify(signed(payload(), 'lin_wh_other'), new Date())).toThrow(
      SignatureError,
    );
    const oldBody = payload(Date.now() - 120_000);
    const sig = createHmac('sha256', SECRET).update(oldBody).digest('hex');
    expect(() => new LinearWebhookClient(SECRET).verify(Buffer.from(oldBody), sig)).toThrow(
      /timestamp/,
    );
    const stale = webhook({ body: oldBody, headers: { 'linear-signature': sig } });
    expect(() => verifier.verify(stale, new Date())).toThrow(/timestamp/);
  });

  it('accepts any secret while rotating', () => {
    expect(linear({ secrets: ['new', SECRET] }).verifier.verify(signed(), new Date())).toHaveLength(
      1,
    );
  });
});
