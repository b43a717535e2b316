import { generateKeyPairSync, sign } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import { describe, expect, it } from 'vitest';
import { BadRequestError, SignatureError } from '../../src/errors.js';
import { discord } from '../../src/verify/index.js';
import { unix, webhook } from './fixtures.js';

// Requests signed with a fresh Ed25519 key, each signature first accepted by Discord's own
// `verifyKey` (discord-interactions) before onceflow sees it.
function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');
  return { publicHex: raw, privateKey };
}
const app = keyPair();
const other = keyPair();

async function signed(body: string, key = app, at = new Date()) {
  const timestamp = String(unix(at));
  const signature = sign(null, Buffer.from(timestamp + body), key.privateKey).toString('hex');
  expect(await verifyKey(body, signature, timestamp, key.publicHex)).toBe(true);
  return webhook({
    body,
    headers: { 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp },
  });
}

const event = JSON.stringify({
  version: 1,
  application_id: '1234560123453231555',
  type: 1,
  event: {
    type: 'ENTITLEMENT_CREATE',
    timestamp: '2025-06-01T11:59:58.123000',
    data: { id: '1234', sku_id: '999', user_id: '111' },
  },
});
const command = JSON.stringify({
  id: '786008729715212338',
  type: 2,
  application_id: '1234',
  channel_id: '645027906669510667',
  data: { name: 'charge' },
});

describe('discord', () => {
  const { verifier } = discord({ publicKeys: [app.publicHex] });

  it('verifies a webhook event and an interaction, each accepted by verifyKey', async () => {
    const [e] = verifier.verify(await signed(event), new Date());
    expect(e).toMatchObject({
      type: 'ENTITLEMENT_CREATE',
      key: '1234560123453231555',
      occurredAt: '2025-06-01T11:59:58.123Z',
    });
    expect(e?.eventId).toMatch(/^ENTITLEMENT_CREATE:2025-06-01T11:59:58.123000:[0-9a-f]{32}$/);
    expect(verifier.verify(await signed(command), new Date())).toEqual([
      {
        eventId: '786008729715212338',
        type: 'interaction.application_command',
        key: '645027906669510667',
      },
    ]);
  });

  it('answers both PINGs once signed, and nothing else', async () => {
    const interactionPing = await signed('{"type":1}');
    expect(verifier.handshake?.(interactionPing, new Date())).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"type":1}',
    });
    expect(() => verifier.verify(interactionPing, new Date())).toThrow(BadRequestError);
    const eventPing = await signed('{"version":1,"application_id":"1","type":0}');
    expect(verifier.handshake?.(eventPing, new Date())?.status).toBe(204);
    const otherPing = await signed('{"type":1}', other);
    expect(verifier.handshake?.(otherPing, new Date())).toBeUndefined();
    const notPing = await signed(event);
    expect(verifier.handshake?.(notPing, new Date())).toBeUndefined();
  });

  it('rejects one changed body byte, another key, a stale timestamp, a bad header', async () => {
    const request = await signed(event);
    const changed = Buffer.from(request.body);
    changed[5] = changed[5]! ^ 1;
    expect(() => verifier.verify({ ...request, body: changed }, new Date())).toThrow(
      SignatureError,
    );
    const byOther = await signed(event, other);
    expect(() => verifier.verify(byOther, new Date())).toThrow(SignatureError);
    const stale = await signed(event, app, new Date(Date.now() - 3_600_000));
    expect(() => verifier.verify(stale, new Date())).toThrow(/timestamp/);
    const bad = { ...request, headers: { ...request.headers, 'x-signature-ed25519': 'zz' } };
    expect(() => verifier.verify(bad, new Date())).toThrow(SignatureError);
  });

  it('accepts any configured key, and refuses a malformed one at start-up', async () => {
    const both = discord({ publicKeys: [other.publicHex, app.publicHex] }).verifier;
    expect(both.verify(await signed(command), new Date())).toHaveLength(1);
    expect(() => discord({ publicKeys: ['abc'] })).toThrow(/64 hex/);
  });
});
