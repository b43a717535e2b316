import { describe, expect, it } from 'vitest';
import { envelope, fixture } from './helpers.js';

describe('markEnqueued’s asynchronous commit', () => {
  it('stays inside its own transaction: the pooled connection commits durably afterwards', async () => {
    await using fx = await fixture({ max: 1 }); // one connection: the next query reuses it
    const env = envelope();
    const claim = await fx.store.claim(env, { leaseMs: 60_000 });
    if (claim.status !== 'new') throw new Error('not new');
    await fx.store.markEnqueued(env.source, env.id, claim.token);
    expect((await fx.store.stats()).enqueued).toBe(1);
    const setting = await fx.pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    expect(setting.rows[0]?.synchronous_commit).toBe('on');
  });
});
