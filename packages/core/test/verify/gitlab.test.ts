import { describe, expect, it } from 'vitest';
import { BadRequestError, SignatureError } from '../../src/errors.js';
import { gitlab } from '../../src/verify/index.js';
import { webhook } from './fixtures.js';

// Headers as GitLab's webhook docs list them (no SDK signs a GitLab request: the token is the
// shared secret itself).
const TOKEN = 'glwt-secret-1';
const push = JSON.stringify({
  object_kind: 'push',
  event_name: 'push',
  ref: 'refs/heads/main',
  project: { id: 15, path_with_namespace: 'acme/payments' },
});
const request = (token = TOKEN, extra: Record<string, string> = {}) =>
  webhook({
    body: push,
    headers: {
      'x-gitlab-token': token,
      'x-gitlab-event': 'Push Hook',
      'x-gitlab-event-uuid': '13792a34-cac6-4fda-95a8-c58e00a3954e',
      'idempotency-key': 'f5e5f430-f57b-4e6e-9fac-d9128cd7232f',
      ...extra,
    },
  });

describe('gitlab', () => {
  const { verifier } = gitlab({ secrets: [TOKEN] });
  const now = new Date();

  it('accepts the configured token and reads id, type, key', () => {
    expect(verifier.verify(request(), now)).toEqual([
      { eventId: 'f5e5f430-f57b-4e6e-9fac-d9128cd7232f', type: 'push', key: 'acme/payments' },
    ]);
    const { 'idempotency-key': _, ...older } = request().headers;
    expect(verifier.verify({ ...request(), headers: older }, now)[0]?.eventId).toBe(
      '13792a34-cac6-4fda-95a8-c58e00a3954e',
    );
  });

  it('rejects a wrong or missing token; a verified body without an id is a bad request', () => {
    expect(() => verifier.verify(request('glwt-secret-2'), now)).toThrow(SignatureError);
    const { 'x-gitlab-token': _, ...none } = request().headers;
    expect(() => verifier.verify({ ...request(), headers: none }, now)).toThrow(SignatureError);
    const { 'idempotency-key': __, 'x-gitlab-event-uuid': ___, ...noId } = request().headers;
    expect(() => verifier.verify({ ...request(), headers: noId }, now)).toThrow(BadRequestError);
  });

  it('accepts any configured token while rotating', () => {
    expect(gitlab({ secrets: ['new', TOKEN] }).verifier.verify(request(), now)).toHaveLength(1);
  });
});
