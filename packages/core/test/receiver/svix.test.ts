import { randomBytes } from 'node:crypto';
import { Webhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { INBOX_HEADER } from '../../src/contracts/inbox.js';
import { standardWebhooks } from '../../src/verify/standard-webhooks.js';
import { startReceiver } from './setup.js';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

describe('a Svix delivery under Svix header names', () => {
  it("is accepted as Svix's SDK signs it, keeps svix-id and svix-timestamp, never the signature", async () => {
    await using r = await startReceiver({
      sources: { svix: standardWebhooks({ secrets: [SECRET] }) },
    });
    const id = 'msg_svix_receiver_1';
    const body = JSON.stringify({ type: 'invoice.paid', timestamp: new Date().toISOString() });
    const at = new Date();
    const headers = {
      'content-type': 'application/json',
      'svix-id': id,
      'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
      'svix-signature': new Webhook(SECRET).sign(id, at, body),
    };
    const url = `${r.server.url}/webhooks/svix`;

    const res = await fetch(url, { method: 'POST', headers, body });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ status: 'accepted', id });
    const { envelope } = r.spies.publish.mock.calls[0]![0][0]!;
    expect(envelope.headers).toEqual({
      'content-type': 'application/json',
      'svix-id': id,
      'svix-timestamp': headers['svix-timestamp'],
      [INBOX_HEADER]: r.inbox.storeId,
    });

    expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(200); // the retry
    const forged = {
      ...headers,
      'svix-signature': new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(
        id,
        at,
        body,
      ),
    };
    expect((await fetch(url, { method: 'POST', headers: forged, body })).status).toBe(401);
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
  });
});
