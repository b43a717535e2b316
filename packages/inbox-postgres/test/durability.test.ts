import { describe, expect, it } from 'vitest';
import { createPostgresInbox } from '../src/index.js';
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

  it('so do a batch’s settings (asynchronous commit, bounded lock wait)', async () => {
    await using fx = await fixture({ max: 1 });
    const before = await fx.pool.query<{ lock_timeout: string }>('SHOW lock_timeout');
    const store = createPostgresInbox({ pool: fx.pool, schema: fx.schema });
    const envs = Array.from({ length: 5 }, () => envelope());
    const claims = await Promise.all(envs.map((e) => store.claim(e, { leaseMs: 60_000 })));
    await Promise.all(
      envs.map((e, i) => {
        const c = claims[i];
        if (c?.status !== 'new') throw new Error('not new');
        return store.markEnqueued(e.source, e.id, c.token);
      }),
    );
    expect((await store.stats()).enqueued).toBe(5);
    const after = await fx.pool.query<{ synchronous_commit: string; lock_timeout: string }>(
      `SELECT current_setting('synchronous_commit') AS synchronous_commit,
              current_setting('lock_timeout') AS lock_timeout`,
    );
    expect(after.rows[0]).toEqual({
      synchronous_commit: 'on',
      lock_timeout: before.rows[0]?.lock_timeout,
    });
  });
});
