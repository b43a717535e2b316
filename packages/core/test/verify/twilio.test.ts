import { createHash } from 'node:crypto';
import twilioSdk from 'twilio';
import { describe, expect, it } from 'vitest';
import { SignatureError } from '../../src/errors.js';
import { twilio } from '../../src/verify/index.js';
import { webhook } from './fixtures.js';

// Signatures made by Twilio's own SDK (`getExpectedTwilioSignature`), and checked with its
// `validateRequest` / `validateRequestWithBody`, never re-implemented here.
const TOKEN = '12345';
const URL_ = 'https://mycompany.example.com/webhooks/twilio?foo=1';
const now = new Date('2025-06-01T12:00:00Z');
const params = {
  AccountSid: 'AC0000000000000000000000000000000a',
  MessageSid: 'SM0000000000000000000000000000000b',
  MessageStatus: 'delivered',
  To: '+14158141829',
  Body: 'Grüße + 50% off & more',
  Tags: 'b',
};

const formBody = (p: Record<string, string>) => new URLSearchParams(p).toString();

function signedForm(p: Record<string, string> = params, token = TOKEN, url = URL_) {
  const signature = twilioSdk.getExpectedTwilioSignature(token, url, p);
  return webhook({
    url,
    body: formBody(p),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signature,
      'i-twilio-idempotency-token': 'idem-7c2b',
    },
  });
}

function signedJson(body: string, token = TOKEN) {
  const hash = createHash('sha256').update(body).digest('hex');
  const url = `https://mycompany.example.com/webhooks/twilio?bodySHA256=${hash}`;
  const signature = twilioSdk.getExpectedTwilioSignature(token, url, {});
  expect(twilioSdk.validateRequestWithBody(token, signature, url, body)).toBe(true);
  return webhook({
    url,
    body,
    headers: { 'content-type': 'application/json', 'x-twilio-signature': signature },
  });
}

describe('twilio', () => {
  const { verifier } = twilio({ secrets: [TOKEN] });

  it('verifies a form-encoded status callback signed by the SDK and reads id, type, key', () => {
    const request = signedForm();
    expect(
      twilioSdk.validateRequest(TOKEN, request.headers['x-twilio-signature']!, URL_, params),
    ).toBe(true);
    expect(verifier.verify(request, now)).toEqual([
      { eventId: 'idem-7c2b', type: 'message.delivered', key: params.MessageSid },
    ]);
  });

  it('reads a call status, and falls back to sid:status without the idempotency header', () => {
    const call = { AccountSid: 'AC1', CallSid: 'CA9', CallStatus: 'completed' };
    const request = signedForm(call);
    const { 'i-twilio-idempotency-token': _, ...headers } = request.headers;
    expect(verifier.verify({ ...request, headers }, now)).toEqual([
      { eventId: 'CA9:completed', type: 'call.completed', key: 'CA9' },
    ]);
  });

  it('verifies a JSON body through bodySHA256', () => {
    const body = '{"type":"com.twilio.messaging.message.delivered","id":"EZ1","data":{}}';
    expect(verifier.verify(signedJson(body), now)).toEqual([
      { eventId: 'EZ1', type: 'com.twilio.messaging.message.delivered', key: undefined },
    ]);
  });

  it('rejects one changed body byte, a wrong token, another URL, a missing signature', () => {
    const request = signedForm();
    const body = Buffer.from(request.body);
    body[body.length - 1] = 'c'.charCodeAt(0);
    expect(() => verifier.verify({ ...request, body }, now)).toThrow(SignatureError);
    expect(() => verifier.verify(signedForm(params, 'other-token'), now)).toThrow(SignatureError);
    expect(() =>
      verifier.verify({ ...request, url: new URL('https://mycompany.example.com/other') }, now),
    ).toThrow(SignatureError);
    const { 'x-twilio-signature': _, ...unsigned } = request.headers;
    expect(() => verifier.verify({ ...request, headers: unsigned }, now)).toThrow(SignatureError);
    const json = signedJson('{"id":"EZ1","type":"t"}');
    expect(() =>
      verifier.verify({ ...json, body: new TextEncoder().encode('{"id":"EZ2","type":"t"}') }, now),
    ).toThrow(SignatureError);
  });

  it('accepts any token while rotating, and the public origin behind a proxy', () => {
    const rotating = twilio({ secrets: ['new-token', TOKEN] }).verifier;
    expect(rotating.verify(signedForm(), now)).toHaveLength(1);
    const proxied = twilio({ secrets: [TOKEN], publicOrigin: 'https://mycompany.example.com' });
    const inside = { ...signedForm(), url: new URL('http://10.0.0.5:8080/webhooks/twilio?foo=1') };
    expect(proxied.verifier.verify(inside, now)).toHaveLength(1);
    expect(() => verifier.verify(inside, now)).toThrow(SignatureError);
  });
});
