import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConfigError, SignatureError } from '../../src/errors.js';
import { hmac } from '../../src/verify/index.js';
import { awkwardJson, unix, webhook } from './fixtures.js';

const SECRET = 'orders-service-secret';
const OLD = 'orders-service-old-secret';
const now = new Date('2025-06-01T12:00:00Z');
const body = JSON.stringify({
  id: 'ord-evt-1',
  type: 'order.placed',
  order: { id: 'o-9' },
  at: '2025-06-01T11:00:00Z',
});
const mac = (content: string, secret = SECRET, alg = 'sha256', enc: 'hex' | 'base64' = 'hex') =>
  createHmac(alg, secret).update(content).digest(enc);

const fields = {
  eventIdField: 'id',
  typeField: 'type',
  keyField: 'order.id',
  occurredAtField: 'at',
};

describe('hmac', () => {
  it('verifies a prefixed hex signature and reads the configured fields', () => {
    const source = hmac({ secrets: [SECRET], header: 'X-Signature', prefix: 'sha256=', ...fields });
    const request = webhook({ body, headers: { 'x-signature': `sha256=${mac(body)}` } });
    expect(source.verifier.verify(request, now)).toEqual([
      {
        eventId: 'ord-evt-1',
        type: 'order.placed',
        key: 'o-9',
        occurredAt: '2025-06-01T11:00:00.000Z',
      },
    ]);
    expect(source.preset).toMatchObject({
      name: 'hmac',
      scheme: 'HMAC-SHA256(secret, body), hex, header x-signature: sha256=…',
      toleranceSec: null,
      eventId: { from: 'body', field: 'id' },
      retryHorizonMs: 3 * 86_400_000,
    });
  });

  it('supports base64 with sha512, ids and types from headers, and a default type', () => {
    const source = hmac({
      secrets: [SECRET],
      header: 'x-sig',
      algorithm: 'sha512',
      encoding: 'base64',
      eventIdHeader: 'X-Event-Id',
    });
    const headers = {
      'x-sig': mac('plain text body', SECRET, 'sha512', 'base64'),
      'x-event-id': 'e-1',
    };
    expect(source.verifier.verify(webhook({ body: 'plain text body', headers }), now)).toEqual([
      { eventId: 'e-1', type: 'webhook', key: undefined, occurredAt: undefined },
    ]);
    expect(source.preset.eventId).toEqual({ from: 'header', field: 'x-event-id' });
    const typed = hmac({
      secrets: [SECRET],
      header: 'x-sig',
      eventIdHeader: 'x-event-id',
      typeHeader: 'x-type',
    });
    const request = webhook({
      body: 'b',
      headers: { 'x-sig': mac('b'), 'x-event-id': 'e-2', 'x-type': 't' },
    });
    expect(typed.verifier.verify(request, now)[0]?.type).toBe('t');
  });

  it('signs timestamp + "." + body when a timestamp header is set, within the tolerance', () => {
    const source = hmac({
      secrets: [SECRET],
      header: 'x-sig',
      timestampHeader: 'x-ts',
      toleranceSec: 60,
      ...fields,
    });
    const ts = String(unix(now));
    const request = webhook({ body, headers: { 'x-ts': ts, 'x-sig': mac(`${ts}.${body}`) } });
    expect(source.verifier.verify(request, now)).toHaveLength(1);
    expect(source.preset.toleranceSec).toBe(60);
    expect(() => source.verifier.verify(request, new Date(now.getTime() + 61_000))).toThrow(
      SignatureError,
    );
    expect(() => source.verifier.verify(request, new Date(now.getTime() - 61_000))).toThrow(
      SignatureError,
    );
    const unsigned = webhook({ body, headers: { 'x-sig': mac(`${ts}.${body}`) } });
    expect(() => source.verifier.verify(unsigned, now)).toThrow('missing x-ts');
  });

  it('rejects tampering, a wrong secret, a wrong prefix; accepts any secret while rotating', () => {
    const source = hmac({ secrets: [SECRET, OLD], header: 'x-sig', prefix: 'v1=', ...fields });
    const ok = (b: string, h: string) => webhook({ body: b, headers: { 'x-sig': h } });
    expect(source.verifier.verify(ok(body, `v1=${mac(body, OLD)}`), now)).toHaveLength(1);
    expect(() => source.verifier.verify(ok(`${body} `, `v1=${mac(body)}`), now)).toThrow(
      SignatureError,
    );
    expect(() => source.verifier.verify(ok(body, `v1=${mac(body, 'x')}`), now)).toThrow(
      SignatureError,
    );
    expect(() => source.verifier.verify(ok(body, mac(body)), now)).toThrow(SignatureError);
    expect(() => source.verifier.verify(webhook({ body }), now)).toThrow('missing x-sig');
  });

  it('answers BadRequest when the verified request lacks the configured id or type', () => {
    const source = hmac({ secrets: [SECRET], header: 'x-sig', ...fields });
    const noId = JSON.stringify({ type: 't' });
    expect(() =>
      source.verifier.verify(webhook({ body: noId, headers: { 'x-sig': mac(noId) } }), now),
    ).toThrow(/no event id/);
    const noType = JSON.stringify({ id: 7 });
    expect(() =>
      source.verifier.verify(webhook({ body: noType, headers: { 'x-sig': mac(noType) } }), now),
    ).toThrow(BadRequestError);
  });

  it('verifies the bytes as sent, not a re-serialisation', () => {
    const source = hmac({ secrets: [SECRET], header: 'x-sig', eventIdField: 'id' });
    const payload = awkwardJson('"id":"ü-1"');
    expect(
      source.verifier.verify(webhook({ body: payload, headers: { 'x-sig': mac(payload) } }), now)[0]
        ?.eventId,
    ).toBe('ü-1');
    const reserialised = webhook({
      body: JSON.stringify(JSON.parse(payload)),
      headers: { 'x-sig': mac(payload) },
    });
    expect(() => source.verifier.verify(reserialised, now)).toThrow(SignatureError);
  });

  it('refuses bad config: no id source, no header, unknown options', () => {
    expect(() => hmac({ secrets: [SECRET], header: 'x-sig' })).toThrow(
      /eventIdField or eventIdHeader/,
    );
    expect(() => hmac({ secrets: [SECRET], header: '', eventIdField: 'id' })).toThrow(ConfigError);
    expect(() => hmac({ secrets: [], header: 'x', eventIdField: 'id' })).toThrow(ConfigError);
    expect(() =>
      hmac({ secrets: [SECRET], header: 'x', eventIdField: 'id', encoding: 'hexx' as never }),
    ).toThrow(ConfigError);
  });
});
