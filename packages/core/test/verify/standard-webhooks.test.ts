import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConfigError, SignatureError } from '../../src/errors.js';
import { standardWebhooks } from '../../src/verify/index.js';
import { awkwardJson, unix, webhook } from './fixtures.js';

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const SECRET = newSecret();
const OLD = newSecret();
const now = new Date('2025-06-01T12:00:00Z');
const body = JSON.stringify({
  type: 'invoice.paid',
  timestamp: '2025-06-01T11:59:00Z',
  data: { id: 'in_1' },
});

/** Signed by the standardwebhooks reference library. */
function signed(
  payload: string,
  secret = SECRET,
  at = now,
  id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
) {
  return webhook({
    body: payload,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(unix(at)),
      'webhook-signature': new Webhook(secret).sign(id, at, payload),
    },
  });
}

describe('standardWebhooks', () => {
  const { verifier } = standardWebhooks({ secrets: [SECRET] });

  it('verifies a message signed by the reference library and reads id, type, time', () => {
    const request = signed(body);
    expect(verifier.verify(request, now)).toEqual([
      {
        eventId: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
        type: 'invoice.paid',
        occurredAt: '2025-06-01T11:59:00.000Z',
      },
    ]);
    // Cross-check with the library's own verifier (it uses the real clock, so sign for now).
    const fresh = signed(body, SECRET, new Date());
    expect(new Webhook(SECRET).verify(body, fresh.headers)).toMatchObject({ type: 'invoice.paid' });
    expect(verifier.verify(fresh, new Date())).toHaveLength(1);
  });

  it("verifies a message signed by Svix's SDK under Svix's header names", () => {
    const id = 'msg_svix_2KWPBgLlAfxdpx2AI54pPJ85f4W';
    const svix = new SvixWebhook(SECRET);
    const headers = {
      'svix-id': id,
      'svix-timestamp': String(unix(now)),
      'svix-signature': svix.sign(id, now, body),
    };
    expect(verifier.verify(webhook({ body, headers }), now)).toEqual([
      { eventId: id, type: 'invoice.paid', occurredAt: '2025-06-01T11:59:00.000Z' },
    ]);
    // Svix's own verifier takes the same delivery (it checks against the real clock).
    const at = new Date();
    const fresh = {
      ...headers,
      'svix-timestamp': String(unix(at)),
      'svix-signature': svix.sign(id, at, body),
    };
    expect(svix.verify(body, fresh)).toMatchObject({ type: 'invoice.paid' });
    expect(verifier.verify(webhook({ body, headers: fresh }), at)).toHaveLength(1);
  });

  it("binds Svix's id and timestamp into the signature and names the missing svix header", () => {
    const id = 'msg_svix_1';
    const headers = {
      'svix-id': id,
      'svix-timestamp': String(unix(now)),
      'svix-signature': new SvixWebhook(SECRET).sign(id, now, body),
    };
    const tamper = (h: Record<string, string>) => () =>
      verifier.verify(webhook({ body, headers: h }), now);
    expect(tamper({ ...headers, 'svix-id': 'msg_other' })).toThrow(SignatureError);
    expect(tamper({ ...headers, 'svix-timestamp': String(unix(now) + 1) })).toThrow(SignatureError);
    expect(tamper({ ...headers, 'svix-signature': 'v1,AAAA' })).toThrow(/svix-signature/);
    const { 'svix-timestamp': _, ...noTimestamp } = headers;
    expect(tamper(noTimestamp)).toThrow('missing svix-timestamp');
    // A request naming webhook-id is read under webhook-* names only: no mixing of the two sets.
    expect(tamper({ ...headers, 'webhook-id': id })).toThrow('missing webhook-timestamp');
  });

  it('accepts a secret without the whsec_ prefix', () => {
    const bare = standardWebhooks({ secrets: [SECRET.slice('whsec_'.length)] });
    expect(bare.verifier.verify(signed(body), now)).toHaveLength(1);
  });

  it('accepts several space-separated signatures when any v1 matches', () => {
    const request = signed(body);
    const good = request.headers['webhook-signature'] ?? '';
    const header = `v1,${Buffer.alloc(32).toString('base64')} v1a,bm90LWNoZWNrZWQ= ${good}`;
    expect(
      verifier.verify(
        { ...request, headers: { ...request.headers, 'webhook-signature': header } },
        now,
      ),
    ).toHaveLength(1);
    const onlyOthers = `v1,${Buffer.alloc(32).toString('base64')} v2,${good.slice(3)}`;
    const rejected = {
      ...request,
      headers: { ...request.headers, 'webhook-signature': onlyOthers },
    };
    expect(() => verifier.verify(rejected, now)).toThrow(SignatureError);
  });

  it('binds the id and timestamp into the signature', () => {
    const request = signed(body);
    const otherId = { ...request, headers: { ...request.headers, 'webhook-id': 'msg_other' } };
    expect(() => verifier.verify(otherId, now)).toThrow(SignatureError);
    const otherTime = {
      ...request,
      headers: { ...request.headers, 'webhook-timestamp': String(unix(now) + 1) },
    };
    expect(() => verifier.verify(otherTime, now)).toThrow(SignatureError);
  });

  it('rejects a tampered body and a wrong secret; accepts any secret while rotating', () => {
    const tampered = {
      ...signed(body),
      body: new TextEncoder().encode(body.replace('in_1', 'in_2')),
    };
    expect(() => verifier.verify(tampered, now)).toThrow(SignatureError);
    expect(() => verifier.verify(signed(body, OLD), now)).toThrow(SignatureError);
    expect(
      standardWebhooks({ secrets: [SECRET, OLD] }).verifier.verify(signed(body, OLD), now),
    ).toHaveLength(1);
  });

  it('rejects stale and future timestamps', () => {
    expect(() =>
      verifier.verify(signed(body, SECRET, new Date(now.getTime() - 301_000)), now),
    ).toThrow(/tolerance/);
    expect(() =>
      verifier.verify(signed(body, SECRET, new Date(now.getTime() + 301_000)), now),
    ).toThrow(SignatureError);
    expect(
      verifier.verify(signed(body, SECRET, new Date(now.getTime() - 299_000)), now),
    ).toHaveLength(1);
  });

  it('rejects each missing header, before reading the body', () => {
    const request = signed('{not json');
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const { [name]: _, ...headers } = request.headers;
      expect(() => verifier.verify({ ...request, headers }, now)).toThrow(`missing ${name}`);
    }
    expect(() => verifier.verify(request, now)).toThrow(BadRequestError);
  });

  it('answers BadRequest for a verified body without a type', () => {
    expect(() => verifier.verify(signed(JSON.stringify({ data: {} })), now)).toThrow(
      /no event type/,
    );
  });

  it('verifies the bytes as sent, not a re-serialisation', () => {
    const payload = awkwardJson('"type":"ü.created"');
    expect(verifier.verify(signed(payload), now)[0]?.type).toBe('ü.created');
    const request = {
      ...signed(payload),
      body: new TextEncoder().encode(JSON.stringify(JSON.parse(payload))),
    };
    expect(() => verifier.verify(request, now)).toThrow(SignatureError);
  });

  it('refuses secrets that are not whsec_<base64>, and other bad config', () => {
    expect(() => standardWebhooks({ secrets: ['whsec_not base64!'] })).toThrow(ConfigError);
    expect(() => standardWebhooks({ secrets: ['whsec_'] })).toThrow(ConfigError);
    expect(() => standardWebhooks({ secrets: ['whsec_abc'] })).toThrow(/whsec_<base64>/);
    expect(() => standardWebhooks({ secrets: [] })).toThrow(ConfigError);
  });
});
