import { sign, verify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConfigError, SignatureError } from '../../src/errors.js';
import { github } from '../../src/verify/index.js';
import { awkwardJson, webhook } from './fixtures.js';

const SECRET = 'gh-current-secret';
const OLD = 'gh-previous-secret';
const now = new Date('2025-06-01T12:00:00Z');

const payload = JSON.stringify({
  action: 'opened',
  issue: { number: 7 },
  repository: { full_name: 'acme/app' },
});

async function signed(body: string, secret = SECRET, extra: Record<string, string> = {}) {
  return webhook({
    body,
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': await sign(secret, body),
      'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      'x-github-event': 'issues',
      ...extra,
    },
  });
}

describe('github', () => {
  const source = github({ secrets: [SECRET] });

  it('verifies a delivery signed by @octokit/webhooks-methods and reads id, type, key', async () => {
    const request = await signed(payload);
    expect(await verify(SECRET, payload, request.headers['x-hub-signature-256'] ?? '')).toBe(true);
    expect(source.verifier.verify(request, now)).toEqual([
      { eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958', type: 'issues.opened', key: 'acme/app' },
    ]);
    expect(source.preset.toleranceSec).toBeNull();
  });

  it('uses the bare event name when the body has no action', async () => {
    const request = await signed(JSON.stringify({ zen: 'Keep it simple.', hook_id: 1 }), SECRET, {
      'x-github-event': 'ping',
    });
    expect(source.verifier.verify(request, now)[0]).toMatchObject({ type: 'ping', key: undefined });
  });

  it('reads form-encoded deliveries (payload=<json>)', async () => {
    const body = `payload=${encodeURIComponent(payload)}`;
    const request = await signed(body, SECRET, {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(source.verifier.verify(request, now)[0]?.type).toBe('issues.opened');
  });

  it('rejects a tampered body, a wrong secret, a missing or malformed signature', async () => {
    const request = await signed(payload);
    const tampered = {
      ...request,
      body: new TextEncoder().encode(payload.replace('opened', 'closed')),
    };
    expect(() => source.verifier.verify(tampered, now)).toThrow(SignatureError);
    const wrongSecret = await signed(payload, 'nope');
    expect(() => source.verifier.verify(wrongSecret, now)).toThrow(SignatureError);
    const digest = (request.headers['x-hub-signature-256'] ?? '').slice('sha256='.length);
    for (const header of [digest, `sha1=${digest}`, 'sha256=zz', '']) {
      const bad = { ...request, headers: { ...request.headers, 'x-hub-signature-256': header } };
      expect(() => source.verifier.verify(bad, now)).toThrow(SignatureError);
    }
  });

  it('accepts any configured secret while rotating', async () => {
    const rotating = github({ secrets: [SECRET, OLD] });
    const request = await signed(payload, OLD);
    expect(rotating.verifier.verify(request, now)).toHaveLength(1);
  });

  it('answers BadRequest when a verified request lacks the delivery id or event name', async () => {
    const request = await signed(payload);
    const { 'x-github-delivery': _, ...noId } = request.headers;
    expect(() => source.verifier.verify({ ...request, headers: noId }, now)).toThrow(
      BadRequestError,
    );
    const { 'x-github-event': __, ...noEvent } = request.headers;
    expect(() => source.verifier.verify({ ...request, headers: noEvent }, now)).toThrow(
      BadRequestError,
    );
  });

  it('checks the signature before parsing anything', async () => {
    const request = await signed('{not json');
    expect(() => source.verifier.verify(request, now)).toThrow(BadRequestError);
    const forgedSignature = await sign('x', '{not json');
    const forged = {
      ...request,
      headers: { ...request.headers, 'x-hub-signature-256': forgedSignature },
    };
    expect(() => source.verifier.verify(forged, now)).toThrow(SignatureError);
  });

  it('verifies the bytes as sent, not a re-serialisation', async () => {
    const body = awkwardJson('"action":"created","repository":{"full_name":"acme/ü"}');
    const exact = await signed(body);
    expect(source.verifier.verify(exact, now)[0]?.key).toBe('acme/ü');
    const request = { ...exact, body: new TextEncoder().encode(JSON.stringify(JSON.parse(body))) };
    expect(() => source.verifier.verify(request, now)).toThrow(SignatureError);
  });

  it('refuses bad config without echoing secrets', () => {
    expect(() => github({ secrets: [] })).toThrow(ConfigError);
    try {
      github({ secrets: [SECRET, ''] });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect(String(err)).not.toContain(SECRET);
    }
  });
});
