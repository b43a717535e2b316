import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SignatureError } from '../../src/errors.js';
import { intercom, mailgun } from '../../src/verify/index.js';
import { unix, webhook } from './fixtures.js';

// Neither sender has an SDK that verifies its webhooks: these requests follow the algorithm
// each documents (Mailgun: hex HMAC-SHA256 of timestamp + token; Intercom: sha1= hex HMAC-SHA1
// of the raw body) with the field names of their documented example payloads.
const now = new Date();

describe('mailgun', () => {
  const KEY = 'key-mailgun-signing-1';
  const body = (key = KEY, at = now, eventId = 'Ase7i2zsRYeDXztHGENqRA') => {
    const timestamp = String(unix(at));
    const token = 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0';
    return JSON.stringify({
      signature: {
        timestamp,
        token,
        signature: createHmac('sha256', key)
          .update(timestamp + token)
          .digest('hex'),
      },
      'event-data': {
        event: 'delivered',
        id: eventId,
        timestamp: 1748779198.329574,
        message: { headers: { 'message-id': '20250601.1@mg.example.com' } },
      },
    });
  };
  const { verifier } = mailgun({ secrets: [KEY] });

  it('verifies the body signature and reads id, type, key, time', () => {
    expect(verifier.verify(webhook({ body: body() }), now)).toEqual([
      {
        eventId: 'Ase7i2zsRYeDXztHGENqRA',
        type: 'delivered',
        key: '20250601.1@mg.example.com',
        occurredAt: '2025-06-01T11:59:58.000Z',
      },
    ]);
  });

  it('rejects a changed signature byte, a wrong key, a stale timestamp when a tolerance is set', () => {
    const text = body();
    const changed = text.replace(
      /"signature":"([0-9a-f])/,
      (_, c) => `"signature":"${c === 'a' ? 'b' : 'a'}`,
    );
    expect(() => verifier.verify(webhook({ body: changed }), now)).toThrow(SignatureError);
    expect(() => verifier.verify(webhook({ body: body('other') }), now)).toThrow(SignatureError);
    expect(() => verifier.verify(webhook({ body: 'not json' }), now)).toThrow(SignatureError);
    const old = webhook({ body: body(KEY, new Date(Date.now() - 3_600_000)) });
    expect(verifier.verify(old, now)).toHaveLength(1);
    expect(() => mailgun({ secrets: [KEY], toleranceSec: 600 }).verifier.verify(old, now)).toThrow(
      /timestamp/,
    );
  });
});

describe('intercom', () => {
  const SECRET = 'intercom-client-secret';
  const payload = JSON.stringify({
    type: 'notification_event',
    id: 'notif_ccd8a4d2-3da4-4d6f-9b3e-5e0a5b8f1d9c',
    topic: 'conversation.user.created',
    created_at: 1748779198,
    data: { item: { type: 'conversation', id: '147' } },
  });
  const signed = (text = payload, secret = SECRET) =>
    webhook({
      body: text,
      headers: {
        'x-hub-signature': `sha1=${createHmac('sha1', secret).update(text).digest('hex')}`,
      },
    });
  const { verifier } = intercom({ secrets: [SECRET] });

  it('verifies X-Hub-Signature and reads id, topic, key, time', () => {
    expect(verifier.verify(signed(), now)).toEqual([
      {
        eventId: 'notif_ccd8a4d2-3da4-4d6f-9b3e-5e0a5b8f1d9c',
        type: 'conversation.user.created',
        key: '147',
        occurredAt: '2025-06-01T11:59:58.000Z',
      },
    ]);
  });

  it('rejects one changed body byte, a wrong secret, a sha256 header', () => {
    const request = signed();
    const changed = Buffer.from(request.body);
    changed[2] = changed[2]! ^ 1;
    expect(() => verifier.verify({ ...request, body: changed }, now)).toThrow(SignatureError);
    expect(() => verifier.verify(signed(payload, 'other'), now)).toThrow(SignatureError);
    const sha256 = {
      ...request,
      headers: {
        'x-hub-signature': `sha256=${createHmac('sha256', SECRET).update(payload).digest('hex')}`,
      },
    };
    expect(() => verifier.verify(sha256, now)).toThrow(SignatureError);
    expect(intercom({ secrets: ['new', SECRET] }).verifier.verify(signed(), now)).toHaveLength(1);
  });
});
