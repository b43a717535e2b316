import { execFileSync } from 'node:child_process';
import { createSign } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { SecretsLookupError, SignatureError } from '../../src/errors.js';
import { paypal } from '../../src/verify/index.js';
import { webhook } from './fixtures.js';

// A certificate and key of the test's own (openssl), signing exactly as PayPal documents its
// webhook signature: SHA256withRSA over `<transmission id>|<time>|<webhook id>|<crc32(body)>`.
function certificate(days = 2) {
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-paypal-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-sha256',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      String(days),
      '-subj',
      '/CN=messageverificationcerts.paypal.com',
    ],
    { stdio: 'ignore' },
  );
  return {
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
  };
}
const pki = certificate();
const other = certificate();
const CERT_URL =
  'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
const WEBHOOK_ID = '1JE4291016473214C';
const body = JSON.stringify({
  id: 'WH-2WR32451HC0233532-67976317FL4543714',
  event_type: 'PAYMENT.CAPTURE.COMPLETED',
  create_time: '2025-06-01T11:59:58.123Z',
  resource: { id: '42311647XV020574X', status: 'COMPLETED' },
});

function signed(payload = body, key = pki.key, webhookId = WEBHOOK_ID, certUrl = CERT_URL) {
  const id = 'b2384410-f8d2-11ef-8e8b-1d0b3a8d4f8e';
  const time = '2025-06-01T11:59:59Z';
  const signer = createSign('RSA-SHA256');
  signer.update(`${id}|${time}|${webhookId}|${crc32(payload)}`);
  return {
    source: 'paypal',
    pathTenant: undefined,
    ...webhook({
      body: payload,
      headers: {
        'paypal-transmission-id': id,
        'paypal-transmission-time': time,
        'paypal-transmission-sig': signer.sign(key, 'base64'),
        'paypal-cert-url': certUrl,
        'paypal-auth-algo': 'SHA256withRSA',
      },
    }),
  };
}

async function verify(source: ReturnType<typeof paypal>, request: ReturnType<typeof signed>) {
  const { verifier } = await source.verifierFor!(request);
  return verifier.verify(request, new Date());
}

describe('paypal', () => {
  it('verifies with the certificate it loads once, and reads id, type, key, time', async () => {
    const fetchCertificate = vi.fn(async () => pki.cert);
    const source = paypal({ webhookIds: [WEBHOOK_ID], fetchCertificate });
    expect(await verify(source, signed())).toEqual([
      {
        eventId: 'WH-2WR32451HC0233532-67976317FL4543714',
        type: 'PAYMENT.CAPTURE.COMPLETED',
        key: '42311647XV020574X',
        occurredAt: '2025-06-01T11:59:58.123Z',
      },
    ]);
    await verify(source, signed());
    expect(fetchCertificate).toHaveBeenCalledTimes(1);
    expect(fetchCertificate).toHaveBeenCalledWith(CERT_URL);
  });

  it('rejects one changed body byte, another key, another webhook id, a foreign certificate URL', async () => {
    const fetchCertificate = vi.fn(async () => pki.cert);
    const source = paypal({ webhookIds: [WEBHOOK_ID], fetchCertificate });
    const request = signed();
    const changed = Buffer.from(request.body);
    changed[4] = changed[4]! ^ 1;
    await expect(verify(source, { ...request, body: changed })).rejects.toThrow(SignatureError);
    await expect(verify(source, signed(body, other.key))).rejects.toThrow(SignatureError);
    await expect(verify(source, signed(body, pki.key, 'WH-OTHER'))).rejects.toThrow(SignatureError);
    for (const url of [
      'https://evil.example.com/cert',
      'http://api.paypal.com/cert',
      'https://paypal.com.evil.io/c',
    ])
      await expect(verify(source, signed(body, pki.key, WEBHOOK_ID, url))).rejects.toThrow(
        /paypal\.com/,
      );
    expect(fetchCertificate).toHaveBeenCalledTimes(1);
    const rotating = paypal({ webhookIds: ['WH-NEW', WEBHOOK_ID], fetchCertificate });
    expect(await verify(rotating, signed())).toHaveLength(1);
  });

  it('answers a certificate that cannot be loaded with SecretsLookupError (503), an expired one with 401', async () => {
    const down = paypal({
      webhookIds: [WEBHOOK_ID],
      fetchCertificate: async () => {
        throw new Error('ECONNREFUSED');
      },
    });
    await expect(down.verifierFor!(signed())).rejects.toBeInstanceOf(SecretsLookupError);
    const source = paypal({ webhookIds: [WEBHOOK_ID], fetchCertificate: async () => pki.cert });
    const { verifier } = await source.verifierFor!(signed());
    expect(() => verifier.verify(signed(), new Date(Date.now() + 5 * 86_400_000))).toThrow(
      /not valid/,
    );
  });
});
