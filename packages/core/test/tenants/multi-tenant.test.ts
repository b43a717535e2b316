import { describe, expect, it } from 'vitest';
import { TENANT_HEADER } from '../../src/receiver/index.js';
import { type SecretsRequest, tenantSecrets } from '../../src/tenants/tenant-secrets.js';
import { startReceiver } from '../receiver/setup.js';
import { SENDERS } from './signers.js';

const TENANTS = ['acme', 'globex', 'initech'] as const;
const TTL_MS = 60_000;

/** A secrets store per (source, tenant), with a switchable outage and a count of lookups. */
function vault() {
  const secrets = new Map<string, string[]>();
  const state = { down: false, hang: false, lookups: 0 };
  return {
    state,
    set: (source: string, tenant: string, list: string[]) =>
      secrets.set(`${source}/${tenant}`, list),
    async lookup({ source, tenant }: SecretsRequest): Promise<readonly string[]> {
      state.lookups++;
      if (state.hang) return new Promise(() => {});
      if (state.down) throw new Error('vault: connection refused');
      return secrets.get(`${source}/${tenant}`) ?? [];
    },
  };
}

async function setup() {
  const v = vault();
  const clock = { ms: 1_000_000 };
  const sources = Object.fromEntries(
    SENDERS.map((s) => [
      s.name,
      tenantSecrets(s.build, {
        secrets: (r) => v.lookup(r),
        ttlMs: TTL_MS,
        lookupTimeoutMs: 200,
        now: () => clock.ms,
      }),
    ]),
  );
  const r = await startReceiver({ sources, config: { pathPrefix: '/webhooks', retryAfterSec: 7 } });
  const post = async (
    source: string,
    tenant: string,
    d: { body: string; headers: Record<string, string> },
  ) => {
    const res = await fetch(`${r.server.url}/webhooks/${source}/${tenant}`, {
      method: 'POST',
      headers: d.headers,
      body: d.body,
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      json: await res.json(),
    };
  };
  return { r, v, clock, post };
}

describe('one receiver, many sources and tenants on one path prefix', () => {
  it.each(SENDERS.map((s) => [s.name, s] as const))(
    '%s: each of 3 tenants is verified with its own secrets; rotation overlaps, then the old secret is refused',
    async (_name, sender) => {
      const { r, v, clock, post } = await setup();
      await using _ = r;
      const secretOf = Object.fromEntries(TENANTS.map((t) => [t, sender.secret()]));
      for (const t of TENANTS) v.set(sender.name, t, [secretOf[t]!]);

      for (const t of TENANTS) {
        const d = sender.deliver(secretOf[t]!);
        expect(await post(sender.name, t, d)).toMatchObject({ status: 202, json: { id: d.id } });
      }
      // Another tenant's secret does not open this tenant's endpoint.
      expect((await post(sender.name, 'acme', sender.deliver(secretOf.globex!))).status).toBe(401);
      const published = r.spies.publish.mock.calls.map((c) => c[0][0]!.envelope);
      expect(published.map((e) => [e.source, e.headers[TENANT_HEADER]])).toEqual(
        TENANTS.map((t) => [sender.name, t]),
      );
      expect(v.state.lookups).toBe(3); // one per tenant, then cached

      // Rotation at acme: the new secret is added beside the old one.
      const old = secretOf.acme!;
      const fresh = sender.secret();
      v.set(sender.name, 'acme', [fresh, old]);
      expect((await post(sender.name, 'acme', sender.deliver(fresh))).status).toBe(401); // cached
      clock.ms += TTL_MS + 1;
      expect((await post(sender.name, 'acme', sender.deliver(fresh))).status).toBe(202);
      expect((await post(sender.name, 'acme', sender.deliver(old))).status).toBe(202); // overlap
      // The old secret is retired: accepted until the cached list expires, refused after.
      v.set(sender.name, 'acme', [fresh]);
      expect((await post(sender.name, 'acme', sender.deliver(old))).status).toBe(202);
      clock.ms += TTL_MS + 1;
      expect((await post(sender.name, 'acme', sender.deliver(old))).status).toBe(401);
      expect((await post(sender.name, 'acme', sender.deliver(fresh))).status).toBe(202);
      // The other tenants never changed.
      expect((await post(sender.name, 'initech', sender.deliver(secretOf.initech!))).status).toBe(
        202,
      );
    },
  );

  it('answers a lookup outage 503 with Retry-After and enqueues nothing; recovers when the lookup does', async () => {
    const { r, v, clock, post } = await setup();
    await using _ = r;
    const stripe = SENDERS[0]!;
    const secrets = Object.fromEntries(TENANTS.map((t) => [t, stripe.secret()]));
    for (const t of TENANTS) v.set('stripe', t, [secrets[t]!]);
    expect((await post('stripe', 'acme', stripe.deliver(secrets.acme!))).status).toBe(202);
    const before = {
      claims: r.spies.claim.mock.calls.length,
      published: r.spies.publish.mock.calls.length,
    };

    v.state.down = true;
    // acme's secrets are still fresh: no lookup, still verified.
    expect((await post('stripe', 'acme', stripe.deliver(secrets.acme!))).status).toBe(202);
    before.claims++;
    before.published++;
    // globex was never looked up, and acme's list expires: both need the lookup, which fails.
    clock.ms += TTL_MS + 1;
    for (const t of ['globex', 'acme'] as const) {
      const answer = await post('stripe', t, stripe.deliver(secrets[t]!));
      expect(answer).toEqual({
        status: 503,
        retryAfter: '7',
        json: { status: 'secrets-unavailable' },
      });
      // A forged request during the outage is no 401 either: nothing could be verified.
      expect((await post('stripe', t, stripe.deliver('whsec_forged'))).status).toBe(503);
    }
    v.state.down = false;
    v.state.hang = true; // a lookup that never answers: the timeout answers 503 too
    expect((await post('stripe', 'initech', stripe.deliver(secrets.initech!))).status).toBe(503);
    expect(r.spies.claim.mock.calls.length).toBe(before.claims);
    expect(r.spies.publish.mock.calls.length).toBe(before.published);
    expect(await r.count('webhooksReceived', { outcome: 'secrets-unavailable' })).toBe(5);

    v.state.hang = false;
    expect((await post('stripe', 'globex', stripe.deliver(secrets.globex!))).status).toBe(202);
  });

  it('shares one lookup among concurrent requests of a tenant; an unknown tenant is 401, a missing one 400', async () => {
    const { r, v, post } = await setup();
    await using _ = r;
    const stripe = SENDERS[0]!;
    const secret = stripe.secret();
    v.set('stripe', 'acme', [secret]);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post('stripe', 'acme', stripe.deliver(secret))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(202));
    expect(v.state.lookups).toBe(1);
    expect((await post('stripe', 'nobody', stripe.deliver(secret))).status).toBe(401);
    const d = stripe.deliver(secret);
    const missing = await fetch(`${r.server.url}/webhooks/stripe`, { method: 'POST', ...d });
    expect(missing.status).toBe(400);
    const outside = await fetch(`${r.server.url}/hooks/stripe/acme`, { method: 'POST', ...d });
    expect(outside.status).toBe(404);
  });
});
