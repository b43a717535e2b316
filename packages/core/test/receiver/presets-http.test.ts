import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import twilioSdk from 'twilio';
import { describe, expect, it } from 'vitest';
import { discord, eventGrid, paypal, twilio, zoom } from '../../src/verify/index.js';
import { startReceiver } from './setup.js';

// The new presets through the real receiver over HTTP: a signed delivery is accepted (202) and
// its retry answered as a duplicate (200), a forged one refused (401), and each handshake
// answered without a claim or a publish.
const unix = () => String(Math.floor(Date.now() / 1000));

describe('sender presets over HTTP', () => {
  it('twilio: a form-encoded callback signed by the SDK for the URL it posts to', async () => {
    await using r = await startReceiver({ sources: { twilio: twilio({ secrets: ['tok'] }) } });
    const url = `${r.server.url}/webhooks/twilio`;
    const params = { MessageSid: 'SM1', MessageStatus: 'delivered', AccountSid: 'AC1' };
    const post = (signature: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': signature,
          'i-twilio-idempotency-token': 'idem-http-1',
        },
        body: new URLSearchParams(params).toString(),
      });
    const signature = twilioSdk.getExpectedTwilioSignature('tok', url, params);
    expect((await post(signature)).status).toBe(202);
    expect((await post(signature)).status).toBe(200);
    expect((await post(twilioSdk.getExpectedTwilioSignature('other', url, params))).status).toBe(
      401,
    );
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
  });

  it('zoom: the URL validation is answered, then an event accepted', async () => {
    await using r = await startReceiver({ sources: { zoom: zoom({ secrets: ['zs'] }) } });
    const url = `${r.server.url}/webhooks/zoom`;
    const post = (body: string, secret = 'zs') => {
      const ts = unix();
      const mac = createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
      return fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-zm-signature': `v0=${mac}`,
          'x-zm-request-timestamp': ts,
        },
        body,
      });
    };
    const validation = await post(
      JSON.stringify({ event: 'endpoint.url_validation', payload: { plainToken: 'pt1' } }),
    );
    expect(validation.status).toBe(200);
    expect(await validation.json()).toEqual({
      plainToken: 'pt1',
      encryptedToken: createHmac('sha256', 'zs').update('pt1').digest('hex'),
    });
    const event = JSON.stringify({
      event: 'meeting.ended',
      event_ts: 1748779198123,
      payload: { object: { uuid: 'm1' } },
    });
    expect((await post(event)).status).toBe(202);
    expect((await post(event, 'forged')).status).toBe(401);
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
  });

  it('discord: both PINGs answered as Discord expects, an event accepted once', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const hex = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');
    await using r = await startReceiver({ sources: { discord: discord({ publicKeys: [hex] }) } });
    const url = `${r.server.url}/webhooks/discord`;
    const post = async (body: string) => {
      const ts = unix();
      const signature = sign(null, Buffer.from(ts + body), privateKey).toString('hex');
      expect(await verifyKey(body, signature, ts, hex)).toBe(true);
      return fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-signature-ed25519': signature,
          'x-signature-timestamp': ts,
        },
        body,
      });
    };
    const ping = await post('{"type":1}');
    expect(ping.status).toBe(200);
    expect(await ping.json()).toEqual({ type: 1 });
    expect((await post('{"version":1,"application_id":"1","type":0}')).status).toBe(204);
    const event = JSON.stringify({
      version: 1,
      application_id: '1',
      type: 1,
      event: { type: 'APPLICATION_AUTHORIZED', timestamp: '2025-06-01T11:59:58', data: {} },
    });
    expect((await post(event)).status).toBe(202);
    expect((await post(event)).status).toBe(200);
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
  });

  it('event grid: the subscription validation answered, a batch of two accepted as two events', async () => {
    await using r = await startReceiver({ sources: { azure: eventGrid({ secrets: ['egs'] }) } });
    const url = `${r.server.url}/webhooks/azure?code=egs`;
    const post = (events: unknown[], at = url) =>
      fetch(at, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'aeg-event-type': 'Notification' },
        body: JSON.stringify(events),
      });
    const validation = await post([
      {
        id: 'v1',
        eventType: 'Microsoft.EventGrid.SubscriptionValidationEvent',
        subject: '',
        eventTime: '2025-06-01T11:59:58Z',
        data: { validationCode: 'code-1' },
        dataVersion: '1',
      },
    ]);
    expect(await validation.json()).toEqual({ validationResponse: 'code-1' });
    const batch = ['a', 'b'].map((id) => ({
      id: `eg-${id}`,
      eventType: 'Contoso.Items.ItemReceived',
      subject: `items/${id}`,
      eventTime: '2025-06-01T11:59:58Z',
      data: { id },
      dataVersion: '1',
    }));
    expect((await post(batch)).status).toBe(202);
    expect((await post(batch, `${r.server.url}/webhooks/azure?code=nope`)).status).toBe(401);
    const published = r.spies.publish.mock.calls.flatMap((call) => call[0]);
    expect(published.map((p) => p.envelope.id).sort()).toEqual(['eg-a', 'eg-b']);
  });
});

describe('paypal over HTTP', () => {
  it('answers 503 with Retry-After while its certificate cannot be loaded, and nothing is stored', async () => {
    await using r = await startReceiver({
      sources: {
        paypal: paypal({
          webhookIds: ['WH1'],
          fetchCertificate: async () => {
            throw new Error('ECONNREFUSED');
          },
        }),
      },
    });
    const res = await fetch(`${r.server.url}/webhooks/paypal`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'paypal-transmission-id': 't1',
        'paypal-transmission-time': '2025-06-01T11:59:59Z',
        'paypal-transmission-sig': 'c2ln',
        'paypal-cert-url': 'https://api.paypal.com/v1/notifications/certs/CERT-1',
        'paypal-auth-algo': 'SHA256withRSA',
      },
      body: '{"id":"WH-1","event_type":"PAYMENT.CAPTURE.COMPLETED"}',
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(r.spies.publish).not.toHaveBeenCalled();
  });
});
