import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConfigError, SignatureError } from '../../src/errors.js';
import { stripe } from '../../src/verify/index.js';
import { awkwardJson, unix, webhook } from './fixtures.js';

const client = new Stripe('sk_test_placeholder');
const SECRET = 'whsec_test_current';
const OLD = 'whsec_test_previous';
const now = new Date('2025-06-01T12:00:00Z');

const event = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'evt_1',
    object: 'event',
    type: 'payment_intent.succeeded',
    created: 1_748_779_000,
    data: { object: { id: 'pi_1', object: 'payment_intent', customer: 'cus_9' } },
    ...over,
  });

const signed = (payload: string, secret = SECRET, at = now) =>
  webhook({
    body: payload,
    headers: {
      'stripe-signature': client.webhooks.generateTestHeaderString({
        payload,
        secret,
        timestamp: unix(at),
      }),
    },
  });

describe('stripe', () => {
  const source = stripe({ secrets: [SECRET] });

  it('verifies a delivery signed by the Stripe SDK and reads id, type, key, time', () => {
    const request = signed(event());
    expect(source.verifier.verify(request, now)).toEqual([
      {
        eventId: 'evt_1',
        type: 'payment_intent.succeeded',
        key: 'cus_9',
        occurredAt: '2025-06-01T11:56:40.000Z',
      },
    ]);
    // Cross-check: the SDK itself accepts the same request.
    const header = request.headers['stripe-signature'] ?? '';
    const sdk = client.webhooks.constructEvent(
      Buffer.from(request.body),
      header,
      SECRET,
      300,
      undefined,
      now.getTime(),
    );
    expect(sdk.id).toBe('evt_1');
  });

  it('keys by the object id when the object names no customer', () => {
    const payload = event({ data: { object: { id: 'cus_7', object: 'customer' } } });
    expect(source.verifier.verify(signed(payload), now)[0]?.key).toBe('cus_7');
  });

  it('rejects a tampered body and a wrong secret', () => {
    const request = signed(event());
    const tampered = { ...request, body: new TextEncoder().encode(event({ id: 'evt_2' })) };
    expect(() => source.verifier.verify(tampered, now)).toThrow(SignatureError);
    expect(() => source.verifier.verify(signed(event(), 'whsec_other'), now)).toThrow(
      SignatureError,
    );
  });

  it('accepts any configured secret while rotating', () => {
    const rotating = stripe({ secrets: [SECRET, OLD] });
    expect(rotating.verifier.verify(signed(event(), OLD), now)[0]?.eventId).toBe('evt_1');
    expect(rotating.verifier.verify(signed(event(), SECRET), now)[0]?.eventId).toBe('evt_1');
  });

  it('accepts several v1 signatures when any matches, and ignores v0', () => {
    const payload = event();
    const good = signed(payload).headers['stripe-signature']?.split('v1=')[1];
    const header = `t=${unix(now)},v1=${'0'.repeat(64)},v1=${good},v0=${'1'.repeat(64)}`;
    const request = webhook({ body: payload, headers: { 'stripe-signature': header } });
    expect(source.verifier.verify(request, now)).toHaveLength(1);
    const onlyBad = webhook({
      body: payload,
      headers: { 'stripe-signature': `t=${unix(now)},v1=${'0'.repeat(64)},v0=${good}` },
    });
    expect(() => source.verifier.verify(onlyBad, now)).toThrow(SignatureError);
  });

  it('rejects timestamps outside the tolerance, in either direction', () => {
    const request = signed(event());
    const at = (sec: number) => new Date(now.getTime() + sec * 1000);
    expect(source.verifier.verify(request, at(300))).toHaveLength(1);
    expect(source.verifier.verify(request, at(-300))).toHaveLength(1);
    expect(() => source.verifier.verify(request, at(301))).toThrow(/tolerance/);
    expect(() => source.verifier.verify(request, at(-301))).toThrow(SignatureError);
    const strict = stripe({ secrets: [SECRET], toleranceSec: 10 });
    expect(strict.preset.toleranceSec).toBe(10);
    expect(() => strict.verifier.verify(request, at(11))).toThrow(SignatureError);
  });

  it('rejects missing or malformed headers before reading the body', () => {
    const notJson = webhook({ body: '{not json', headers: {} });
    expect(() => source.verifier.verify(notJson, now)).toThrow(/missing stripe-signature/);
    for (const header of [
      'v1=abc',
      `t=${unix(now)}`,
      `t=soon,v1=${'0'.repeat(64)}`,
      `t=1,t=2,v1=00`,
    ]) {
      const request = webhook({ body: '{not json', headers: { 'stripe-signature': header } });
      expect(() => source.verifier.verify(request, now)).toThrow(SignatureError);
    }
  });

  it('answers BadRequest for a verified body without an event id', () => {
    const payload = JSON.stringify({ type: 'x' });
    expect(() => source.verifier.verify(signed(payload), now)).toThrow(BadRequestError);
    expect(() => source.verifier.verify(signed('[1,2]'), now)).toThrow(BadRequestError);
  });

  it('verifies the bytes as sent, not a re-serialisation', () => {
    const payload = awkwardJson('"id":"evt_ü","type":"charge.succeeded"');
    expect(source.verifier.verify(signed(payload), now)[0]?.eventId).toBe('evt_ü');
    const reserialised = JSON.stringify(JSON.parse(payload));
    const request = { ...signed(payload), body: new TextEncoder().encode(reserialised) };
    expect(() => source.verifier.verify(request, now)).toThrow(SignatureError);
  });

  it('refuses bad config', () => {
    expect(() => stripe({ secrets: [] })).toThrow(ConfigError);
    expect(() => stripe({ secrets: [''] })).toThrow(ConfigError);
    expect(() => stripe({ secrets: [SECRET], toleranceSec: -1 })).toThrow(ConfigError);
    expect(() => stripe({ secret: SECRET } as never)).toThrow(ConfigError);
  });
});
