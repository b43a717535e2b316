import { generateKeyPairSync, sign } from 'node:crypto';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { describe, expect, it } from 'vitest';
import { BadRequestError, SignatureError } from '../../src/errors.js';
import { sendgrid } from '../../src/verify/index.js';
import { unix, webhook } from './fixtures.js';

// A P-256 key pair of the test's own; each signature is first accepted by SendGrid's own SDK
// (`EventWebhook.verifySignature`) before onceflow sees it.
function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    base64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    privateKey,
  };
}
const mail = keyPair();
const other = keyPair();
const sdk = new EventWebhook();

const batch = JSON.stringify([
  {
    email: 'a@example.com',
    timestamp: 1748779198,
    event: 'delivered',
    sg_event_id: 'ZGVsaXZlcmVkLTAtMjQ',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
  },
  {
    email: 'a@example.com',
    timestamp: 1748779200,
    event: 'open',
    sg_event_id: 'b3BlbmVkLTEtMjQ',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
  },
]);

function signed(body = batch, key = mail, at = new Date()) {
  const timestamp = String(unix(at));
  const signature = sign('sha256', Buffer.from(timestamp + body), key.privateKey).toString(
    'base64',
  );
  const verified = sdk.verifySignature(
    sdk.convertPublicKeyToECDSA(mail.base64),
    body,
    signature,
    timestamp,
  );
  expect(verified).toBe(key === mail);
  return webhook({
    body,
    headers: {
      'x-twilio-email-event-webhook-signature': signature,
      'x-twilio-email-event-webhook-timestamp': timestamp,
    },
  });
}

describe('sendgrid', () => {
  const { verifier } = sendgrid({ publicKeys: [mail.base64] });
  const now = new Date();

  it('turns a signed batch the SDK accepts into one event per element', () => {
    const events = verifier.verify(signed(), now);
    expect(events.map(({ payload: _, ...e }) => e)).toEqual([
      {
        eventId: 'ZGVsaXZlcmVkLTAtMjQ',
        type: 'delivered',
        key: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
        occurredAt: '2025-06-01T11:59:58.000Z',
      },
      {
        eventId: 'b3BlbmVkLTEtMjQ',
        type: 'open',
        key: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
        occurredAt: '2025-06-01T12:00:00.000Z',
      },
    ]);
  });

  it('rejects one changed body byte, another key, a stale timestamp when a tolerance is set', () => {
    const request = signed();
    const changed = Buffer.from(request.body);
    changed[20] = changed[20]! ^ 1;
    expect(() => verifier.verify({ ...request, body: changed }, now)).toThrow(SignatureError);
    expect(() => verifier.verify(signed(batch, other), now)).toThrow(SignatureError);
    const old = signed(batch, mail, new Date(Date.now() - 3_600_000));
    expect(verifier.verify(old, now)).toHaveLength(2);
    const strict = sendgrid({ publicKeys: [mail.base64], toleranceSec: 300 }).verifier;
    expect(() => strict.verify(old, now)).toThrow(/timestamp/);
    expect(() => verifier.verify(signed('{"event":"x"}'), now)).toThrow(BadRequestError);
  });

  it('accepts any configured key while rotating', () => {
    const both = sendgrid({ publicKeys: [other.base64, mail.base64] }).verifier;
    expect(both.verify(signed(), now)).toHaveLength(2);
  });
});
