import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConfigError, SignatureError } from '../../src/errors.js';
import { slack } from '../../src/verify/index.js';
import { awkwardJson, unix, webhook } from './fixtures.js';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const OLD = 'previous-signing-secret';
const now = new Date('2025-06-01T12:00:00Z');

/** Signed as Slack documents it: v0=hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" + body)). */
function signed(body: string, secret = SECRET, at = now) {
  const timestamp = String(unix(at));
  const digest = createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
  return webhook({
    body,
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': `v0=${digest}`,
    },
  });
}

const callback = JSON.stringify({
  token: 'legacy',
  team_id: 'T1',
  type: 'event_callback',
  event: { type: 'app_mention', channel: 'C42', text: 'hi', event_ts: '1748779100.000100' },
  event_id: 'Ev08MFMKH6',
  event_time: 1_748_779_100,
});
const challenge = JSON.stringify({
  token: 'legacy',
  challenge: 'c-3eZbrw1aBm2',
  type: 'url_verification',
});

describe('slack', () => {
  const source = slack({ secrets: [SECRET] });
  const { verifier } = source;

  it('verifies an Events API callback and reads id, type, key, time', () => {
    expect(verifier.verify(signed(callback), now)).toEqual([
      {
        eventId: 'Ev08MFMKH6',
        type: 'app_mention',
        key: 'C42',
        occurredAt: '2025-06-01T11:58:20.000Z',
      },
    ]);
    expect(verifier.handshake?.(signed(callback), new Date())).toBeUndefined();
  });

  it('answers url_verification only once the signature passed', () => {
    const handshake = verifier.handshake;
    if (!handshake) throw new Error('slack has a handshake');
    const answer = handshake(signed(challenge, SECRET, new Date()), new Date());
    expect(answer).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ challenge: 'c-3eZbrw1aBm2' }),
    });
    // Forged or stale: no answer, and verify says 401.
    const forged = signed(challenge, 'attacker', new Date());
    expect(handshake(forged, new Date())).toBeUndefined();
    expect(() => verifier.verify(forged, new Date())).toThrow(SignatureError);
    expect(
      handshake(signed(challenge, SECRET, new Date(Date.now() - 3_600_000)), new Date()),
    ).toBeUndefined();
    // A verified url_verification that reaches verify is a receiver bug, not an event.
    expect(() => verifier.verify(signed(challenge), now)).toThrow(BadRequestError);
  });

  it('rejects a tampered body and a wrong secret', () => {
    const request = signed(callback);
    const tampered = { ...request, body: new TextEncoder().encode(callback.replace('C42', 'C43')) };
    expect(() => verifier.verify(tampered, now)).toThrow(SignatureError);
    expect(() => verifier.verify(signed(callback, 'other'), now)).toThrow(SignatureError);
  });

  it('accepts any configured secret while rotating', () => {
    expect(
      slack({ secrets: [SECRET, OLD] }).verifier.verify(signed(callback, OLD), now),
    ).toHaveLength(1);
  });

  it('rejects stale and future timestamps', () => {
    const request = signed(callback);
    expect(verifier.verify(request, new Date(now.getTime() + 300_000))).toHaveLength(1);
    expect(() => verifier.verify(request, new Date(now.getTime() + 301_000))).toThrow(
      SignatureError,
    );
    expect(() => verifier.verify(request, new Date(now.getTime() - 301_000))).toThrow(
      SignatureError,
    );
  });

  it('rejects missing headers and a signature without v0=', () => {
    const request = signed('{not json');
    for (const name of ['x-slack-signature', 'x-slack-request-timestamp']) {
      const { [name]: _, ...headers } = request.headers;
      expect(() => verifier.verify({ ...request, headers }, now)).toThrow(`missing ${name}`);
    }
    const digest = request.headers['x-slack-signature']?.slice(3) ?? '';
    const bare = { ...request, headers: { ...request.headers, 'x-slack-signature': digest } };
    expect(() => verifier.verify(bare, now)).toThrow(SignatureError);
  });

  it('answers BadRequest for a verified body without event_id or not JSON', () => {
    expect(() => verifier.verify(signed(JSON.stringify({ type: 'event_callback' })), now)).toThrow(
      /no event id/,
    );
    expect(() => verifier.verify(signed('command=%2Fdeploy&text=now'), now)).toThrow(
      BadRequestError,
    );
  });

  it('verifies the bytes as sent, not a re-serialisation', () => {
    const body = awkwardJson(
      '"event_id":"Ev_ü","type":"event_callback","event":{"type":"message"}',
    );
    expect(verifier.verify(signed(body), now)[0]).toMatchObject({
      eventId: 'Ev_ü',
      type: 'message',
    });
    const request = {
      ...signed(body),
      body: new TextEncoder().encode(JSON.stringify(JSON.parse(body))),
    };
    expect(() => verifier.verify(request, now)).toThrow(SignatureError);
  });

  it('refuses bad config', () => {
    expect(() => slack({ secrets: [] })).toThrow(ConfigError);
    expect(() => slack({ secrets: [SECRET], toleranceSec: 1.5 })).toThrow(ConfigError);
  });
});
