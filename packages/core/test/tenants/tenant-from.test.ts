import { describe, expect, it } from 'vitest';
import { TENANT_HEADER } from '../../src/receiver/index.js';
import { tenantSecrets } from '../../src/tenants/tenant-secrets.js';
import { ConfigError } from '../../src/errors.js';
import { startReceiver } from '../receiver/setup.js';
import { SENDERS } from './signers.js';

const stripe = SENDERS[0]!;

describe('tenantSecrets: where the tenant comes from', () => {
  it('reads it from a header or a body field, and puts it on the envelope', async () => {
    const secret = stripe.secret();
    const asked: string[] = [];
    const lookup = async ({ tenant }: { tenant: string }) => {
      asked.push(tenant);
      return tenant === 'acct_1' || tenant === 'shop-9' ? [secret] : [];
    };
    await using r = await startReceiver({
      sources: {
        byHeader: tenantSecrets(stripe.build, { secrets: lookup, tenant: { header: 'X-Tenant' } }),
        byBody: tenantSecrets(stripe.build, { secrets: lookup, tenant: { field: 'account' } }),
      },
    });
    const viaHeader = stripe.deliver(secret);
    const res = await fetch(`${r.server.url}/webhooks/byHeader`, {
      method: 'POST',
      headers: { ...viaHeader.headers, 'x-tenant': 'shop-9' },
      body: viaHeader.body,
    });
    expect(res.status).toBe(202);
    const viaBody = stripe.deliver(secret, { account: 'acct_1' });
    expect(
      (await fetch(`${r.server.url}/webhooks/byBody`, { method: 'POST', ...viaBody })).status,
    ).toBe(202);
    const unnamed = stripe.deliver(secret);
    expect(
      (await fetch(`${r.server.url}/webhooks/byBody`, { method: 'POST', ...unnamed })).status,
    ).toBe(400);
    expect(asked).toEqual(['shop-9', 'acct_1']);
    const tenants = r.spies.publish.mock.calls.map((c) => c[0][0]!.envelope.headers[TENANT_HEADER]);
    expect(tenants).toEqual(['shop-9', 'acct_1']);
  });

  it("fails at start-up when the sender's factory refuses its config", () => {
    expect(() => tenantSecrets(() => stripe.build([]), { secrets: async () => [] })).toThrow(
      ConfigError,
    );
  });
});
