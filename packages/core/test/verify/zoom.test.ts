import { createHmac } from 'node:crypto';
import { AwsLambdaReceiver } from '@zoom/rivet/users';
import { describe, expect, it, vi } from 'vitest';
import { BadRequestError, SignatureError } from '../../src/errors.js';
import { zoom } from '../../src/verify/index.js';
import { unix, webhook } from './fixtures.js';

// Every signature made here is first accepted by Zoom's own SDK (Rivet's receiver, which
// verifies x-zm-signature and answers the URL validation), then handed to onceflow.
const SECRET = 'zoom_secret_token_1';
vi.spyOn(console, 'debug').mockImplementation(() => {});

async function zoomSdkAnswer(body: string, headers: Record<string, string>, secret = SECRET) {
  const handle = new AwsLambdaReceiver({ webhooksSecretToken: secret }).start();
  const answer = (await handle(
    { body, headers, isBase64Encoded: false } as never,
    {} as never,
  )) as {
    statusCode: number;
    body: string;
  };
  return { status: answer.statusCode, body: JSON.parse(answer.body) as Record<string, unknown> };
}

function sign(body: string, secret = SECRET, at = new Date()) {
  const ts = String(unix(at));
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  return { 'x-zm-signature': signature, 'x-zm-request-timestamp': ts };
}

const started = JSON.stringify({
  event: 'meeting.started',
  event_ts: 1748779198123,
  payload: {
    account_id: 'acc1',
    object: { id: 85012345678, uuid: 'u4Yk2/8QmP==', topic: 'Standup' },
  },
});

describe('zoom', () => {
  const source = zoom({ secrets: [SECRET] });

  it('verifies an event the SDK accepts and reads id, type, key, time', async () => {
    const headers = sign(started);
    expect((await zoomSdkAnswer(started, headers)).status).toBe(200);
    expect(source.verifier.verify(webhook({ body: started, headers }), new Date())).toEqual([
      {
        eventId: 'meeting.started:1748779198123:u4Yk2/8QmP==',
        type: 'meeting.started',
        key: 'u4Yk2/8QmP==',
        occurredAt: '2025-06-01T11:59:58.123Z',
      },
    ]);
  });

  it('answers the URL validation as the SDK does, only with a valid signature', async () => {
    const body = JSON.stringify({
      event: 'endpoint.url_validation',
      event_ts: 1748779198123,
      payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' },
    });
    const headers = sign(body);
    const sdk = await zoomSdkAnswer(body, headers);
    const answer = source.verifier.handshake?.(webhook({ body, headers }), new Date());
    expect(answer?.status).toBe(200);
    expect(JSON.parse(answer?.body ?? '{}')).toEqual(sdk.body);
    expect(sdk.body.encryptedToken).toMatch(/^[0-9a-f]{64}$/);
    const forged = sign(body, 'other');
    expect(
      source.verifier.handshake?.(webhook({ body, headers: forged }), new Date()),
    ).toBeUndefined();
    expect(() => source.verifier.verify(webhook({ body, headers }), new Date())).toThrow(
      BadRequestError,
    );
    expect(
      source.verifier.handshake?.(webhook({ body: started, headers: sign(started) }), new Date()),
    ).toBeUndefined();
  });

  it('rejects one changed body byte, a wrong secret, a stale timestamp', async () => {
    const headers = sign(started);
    const changed = started.replace('Standup', 'Standuq');
    expect((await zoomSdkAnswer(changed, headers)).status).toBe(400);
    expect(() => source.verifier.verify(webhook({ body: changed, headers }), new Date())).toThrow(
      SignatureError,
    );
    expect(() =>
      source.verifier.verify(
        webhook({ body: started, headers: sign(started, 'other') }),
        new Date(),
      ),
    ).toThrow(SignatureError);
    const stale = sign(started, SECRET, new Date(Date.now() - 3_600_000));
    expect(() =>
      source.verifier.verify(webhook({ body: started, headers: stale }), new Date()),
    ).toThrow(/timestamp/);
  });

  it('accepts any secret token while rotating', () => {
    const rotating = zoom({ secrets: ['new', SECRET] });
    expect(
      rotating.verifier.verify(webhook({ body: started, headers: sign(started) }), new Date()),
    ).toHaveLength(1);
  });
});
