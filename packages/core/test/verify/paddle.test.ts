import { createHmac } from 'node:crypto';
import { Environment, Paddle } from '@paddle/paddle-node-sdk';
import { describe, expect, it } from 'vitest';
import { SignatureError } from '../../src/errors.js';
import { paddle } from '../../src/verify/index.js';
import { unix, webhook } from './fixtures.js';

// Each signature is made as Paddle documents it and accepted by Paddle's own SDK
// (`webhooks.isSignatureValid`, which checks ts against the real clock) before onceflow sees it.
const SECRET = 'pdl_ntfset_01h0000000000000000000000_abcdefghijklmnop';
const sdk = new Paddle('pdl_sdbx_apikey_x', { environment: Environment.sandbox });
const body = JSON.stringify({
  event_id: 'evt_01h8bzakzx3hm2fmen703n5q45',
  event_type: 'transaction.completed',
  occurred_at: '2025-06-01T11:59:58.123456Z',
  notification_id: 'ntf_01h8bzam1z32agrxjwhjgqk8w6',
  data: { id: 'txn_01h8bz', customer_id: 'ctm_01h8b', status: 'completed' },
});

async function signed(payload = body, secret = SECRET, at = new Date()) {
  const ts = unix(at);
  const h1 = createHmac('sha256', secret).update(`${ts}:${payload}`).digest('hex');
  const header = `ts=${ts};h1=${h1}`;
  if (secret === SECRET && at.getTime() > Date.now() - 4000)
    expect(await sdk.webhooks.isSignatureValid(payload, SECRET, header)).toBe(true);
  return webhook({ body: payload, headers: { 'paddle-signature': header } });
}

describe('paddle', () => {
  const { verifier } = paddle({ secrets: [SECRET] });

  it('verifies a notification the SDK accepts and reads id, type, key, time', async () => {
    expect(verifier.verify(await signed(), new Date())).toEqual([
      {
        eventId: 'evt_01h8bzakzx3hm2fmen703n5q45',
        type: 'transaction.completed',
        key: 'ctm_01h8b',
        occurredAt: '2025-06-01T11:59:58.123Z',
      },
    ]);
  });

  it('rejects one changed body byte, a wrong secret, a stale ts, a header without h1', async () => {
    const request = await signed();
    const tampered = Buffer.from(request.body);
    tampered[10] = tampered[10]! ^ 1;
    expect(() => verifier.verify({ ...request, body: tampered }, new Date())).toThrow(
      SignatureError,
    );
    expect(() => verifier.verify(request, new Date())).not.toThrow();
    const wrong = await signed(body, 'pdl_ntfset_other');
    expect(() => verifier.verify(wrong, new Date())).toThrow(SignatureError);
    const stale = await signed(body, SECRET, new Date(Date.now() - 60_000));
    expect(
      await sdk.webhooks.isSignatureValid(body, SECRET, stale.headers['paddle-signature']!),
    ).toBe(false);
    expect(() => verifier.verify(stale, new Date())).toThrow(/timestamp/);
    const noH1 = { ...request, headers: { 'paddle-signature': `ts=${unix(new Date())}` } };
    expect(() => verifier.verify(noH1, new Date())).toThrow(SignatureError);
  });

  it('accepts any secret while rotating, and a wider tolerance when configured', async () => {
    const rotating = paddle({ secrets: ['pdl_ntfset_new', SECRET] }).verifier;
    expect(rotating.verify(await signed(), new Date())).toHaveLength(1);
    const old = await signed(body, SECRET, new Date(Date.now() - 60_000));
    expect(
      paddle({ secrets: [SECRET], toleranceSec: 300 }).verifier.verify(old, new Date()),
    ).toHaveLength(1);
  });
});
