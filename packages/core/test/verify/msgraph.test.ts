import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConfigError, SignatureError } from '../../src/errors.js';
import { msgraph } from '../../src/verify/index.js';
import { webhook } from './fixtures.js';

const STATE = 'secretClientValue-7c1f';
const OLD = 'previousClientValue-02aa';
const now = new Date('2025-06-01T12:00:00Z');

const item = (over: Record<string, unknown> = {}) => ({
  subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07',
  subscriptionExpirationDateTime: '2025-06-03T18:23:45.9356913Z',
  changeType: 'created',
  resource: 'Users/ccd7/Messages/AAMk',
  resourceData: {
    '@odata.type': '#Microsoft.Graph.Message',
    '@odata.id': 'Users/ccd7/Messages/AAMk',
    id: 'AAMk',
  },
  clientState: STATE,
  tenantId: '84bd8158-6d4d-4958-8b9f-9d6445542f95',
  ...over,
});
const notify = (...items: unknown[]) => webhook({ body: JSON.stringify({ value: items }) });

describe('msgraph', () => {
  const { verifier } = msgraph({ clientStates: [STATE] });

  it('answers the validation handshake with the decoded token as text/plain, body unread', () => {
    const token =
      'Validation: Testing client application reachability for subscription Request-Id: 3a1b';
    const url = `https://hooks.example.test/webhooks/graph?validationToken=${encodeURIComponent(token).replaceAll('%20', '+')}`;
    const answer = verifier.handshake?.(webhook({ url, body: 'not even json' }), new Date());
    expect(answer).toEqual({
      status: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
      body: token,
    });
    expect(
      verifier.handshake?.(
        webhook({ url: 'https://h.test/g?validationToken=', body: '' }),
        new Date(),
      )?.status,
    ).toBe(400);
    expect(verifier.handshake?.(notify(item()), new Date())).toBeUndefined();
  });

  it('returns one event per notification, each with its own bytes and a derived id', () => {
    const a = item();
    const b = item({ changeType: 'updated', resource: 'Users/ccd7/Messages/BBMk' });
    const events = verifier.verify(notify(a, b), now);
    expect(events.map((e) => [e.type, e.key])).toEqual([
      ['created', 'Users/ccd7/Messages/AAMk'],
      ['updated', 'Users/ccd7/Messages/BBMk'],
    ]);
    const [first, second] = events;
    expect(JSON.parse(new TextDecoder().decode(first?.payload))).toEqual(a);
    expect(first?.eventId).toBe(
      createHash('sha256')
        .update(first?.payload ?? '')
        .digest('hex'),
    );
    expect(first?.eventId).not.toBe(second?.eventId);
  });

  it('derives the same id for a retry, however Graph batches or formats it', () => {
    const a = item();
    const alone = verifier.verify(notify(a), now)[0]?.eventId;
    const reordered = Object.fromEntries(Object.entries(a).reverse());
    const spaced = webhook({
      body: JSON.stringify({ value: [item({ changeType: 'deleted' }), reordered] }, null, 2),
    });
    expect(verifier.verify(spaced, now)[1]?.eventId).toBe(alone);
  });

  it('rejects the whole request when any clientState is wrong or missing', () => {
    expect(() => verifier.verify(notify(item({ clientState: 'guess' })), now)).toThrow(
      SignatureError,
    );
    expect(() => verifier.verify(notify(item(), item({ clientState: 'guess' })), now)).toThrow(
      SignatureError,
    );
    expect(() => verifier.verify(notify(item({ clientState: undefined })), now)).toThrow(
      SignatureError,
    );
    expect(() => verifier.verify(notify(item({ clientState: 42 })), now)).toThrow(SignatureError);
    expect(() => verifier.verify(notify(item({ clientState: `${STATE}x` })), now)).toThrow(
      SignatureError,
    );
  });

  it('accepts any configured clientState while rotating', () => {
    const rotating = msgraph({ clientStates: [STATE, OLD] });
    expect(rotating.verifier.verify(notify(item({ clientState: OLD }), item()), now)).toHaveLength(
      2,
    );
  });

  it('rejects bodies with nothing to authenticate', () => {
    for (const body of ['{not json', '{}', '{"value":[]}', '{"value":[1]}', '[]']) {
      expect(() => verifier.verify(webhook({ body }), now)).toThrow(SignatureError);
    }
  });

  it('types lifecycle notifications, and answers BadRequest for an item with no type', () => {
    const lifecycle = item({ changeType: undefined, lifecycleEvent: 'reauthorizationRequired' });
    expect(verifier.verify(notify(lifecycle), now)[0]?.type).toBe(
      'lifecycle.reauthorizationRequired',
    );
    expect(() => verifier.verify(notify(item({ changeType: undefined })), now)).toThrow(
      BadRequestError,
    );
  });

  it('refuses bad config', () => {
    expect(() => msgraph({ clientStates: [] })).toThrow(ConfigError);
    expect(() => msgraph({ clientStates: ['x'.repeat(256)] })).toThrow(ConfigError);
    expect(() => msgraph({ secrets: [STATE] } as never)).toThrow(ConfigError);
  });
});
