import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresInbox, type PostgresInbox } from '../src/index.js';
import { envelope, fixture } from './helpers.js';

const OLD = new Date('2020-01-01T00:00:00Z');
const CUTOFF = new Date('2021-01-01T00:00:00Z');

/**
 * The real pool, counting the purge statements that pass through it; `onBatch` runs as each is
 * sent, and each answers `delayMs` late.
 */
function countingPool(
  pool: pg.Pool,
  counter: { batches: number },
  { onBatch = () => undefined, delayMs = 0 }: { onBatch?: () => void; delayMs?: number } = {},
): pg.Pool {
  return new Proxy(pool, {
    get(target, prop) {
      if (prop !== 'query') return Reflect.get(target, prop, target);
      return async (config: pg.QueryConfig, ...rest: unknown[]) => {
        if (/^onceflow_purge_[0-9a-f]+$/.test(config.name ?? '')) {
          counter.batches += 1;
          onBatch();
          await sleep(delayMs);
        }
        return (target.query as (...args: unknown[]) => unknown)(config, ...rest);
      };
    },
  });
}

async function enqueued(store: PostgresInbox, receivedAt: Date) {
  const env = envelope({ receivedAt });
  const claim = await store.claim(env, { leaseMs: 60_000 });
  if (claim.status !== 'new') throw new Error(`unexpected ${claim.status}`);
  await store.markEnqueued(env.source, env.id, claim.token);
  return env;
}

describe('purge', () => {
  it('deletes old enqueued and completed records in batches, never received or processing ones', async () => {
    await using fx = await fixture();
    const counter = { batches: 0 };
    const store = createPostgresInbox({
      pool: countingPool(fx.pool, counter),
      schema: fx.schema,
      purgeBatchSize: 5,
    });

    for (let i = 0; i < 15; i++) await enqueued(store, OLD);
    for (let i = 0; i < 8; i++) {
      const env = await enqueued(store, OLD);
      const begun = await store.begin(env, { leaseMs: 60_000, attempt: 1 });
      if (begun.status !== 'acquired') throw new Error('not acquired');
      await store.complete(env.source, env.id, begun.token);
    }
    for (let i = 0; i < 2; i++) await store.claim(envelope({ receivedAt: OLD }), { leaseMs: 1 });
    const inProgress = await enqueued(store, OLD);
    await store.begin(inProgress, { leaseMs: 60_000, attempt: 1 });
    for (let i = 0; i < 3; i++) await enqueued(store, new Date());

    expect(await store.purge({ olderThan: CUTOFF })).toBe(23);
    expect(counter.batches).toBe(5); // 5 + 5 + 5 + 5 + 3: the short batch ends the loop
    expect(await store.stats()).toMatchObject({ pending: 2, enqueued: 4, processed: 0 });
    expect(await store.purge({ olderThan: CUTOFF })).toBe(0);
  });

  it('drops conflict records past retention with the rows', async () => {
    await using fx = await fixture({ purgeBatchSize: 2 });
    for (let i = 0; i < 5; i++) await fx.store.recordConflict(envelope());
    expect((await fx.store.stats()).conflicts).toBe(5);
    await fx.pool.query(
      `UPDATE "${fx.schema}".onceflow_inbox_conflicts SET seen_at = $1 WHERE seq IN (
         SELECT seq FROM "${fx.schema}".onceflow_inbox_conflicts ORDER BY seq LIMIT 3)`,
      [OLD],
    );
    await fx.store.purge({ olderThan: CUTOFF });
    expect((await fx.store.stats()).conflicts).toBe(2);
  });

  it('stops between batches when its signal aborts, resolving with the rows deleted so far', async () => {
    await using fx = await fixture();
    const counter = { batches: 0 };
    const stop = new AbortController();
    const store = createPostgresInbox({
      pool: countingPool(fx.pool, counter, { onBatch: () => stop.abort() }),
      schema: fx.schema,
      purgeBatchSize: 5,
    });
    for (let i = 0; i < 12; i++) await enqueued(store, OLD);

    expect(await store.purge({ olderThan: CUTOFF, signal: stop.signal })).toBe(5);
    expect(counter.batches).toBe(1);
    expect(await store.purge({ olderThan: CUTOFF, signal: stop.signal })).toBe(0);
    expect(await store.stats()).toMatchObject({ enqueued: 7 });
    expect(await store.purge({ olderThan: CUTOFF })).toBe(7);
  });

  it('pauses purgePauseRatio times as long as each batch took between batches', async () => {
    await using fx = await fixture();
    const counter = { batches: 0 };
    const pool = countingPool(fx.pool, counter, { delayMs: 10 });
    const options = { pool, schema: fx.schema, purgeBatchSize: 5 };
    for (let i = 0; i < 15; i++) await enqueued(createPostgresInbox(options), OLD);

    const paced = createPostgresInbox({ ...options, purgePauseRatio: 10 });
    const t0 = performance.now();
    expect(await paced.purge({ olderThan: CUTOFF })).toBe(15);
    // Batches of 5, 5, 5 and 0: three pauses of at least 10 × 10 ms.
    expect(counter.batches).toBe(4);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300);
  });

  it('refuses a negative purgePauseRatio', async () => {
    await using fx = await fixture();
    expect(() =>
      createPostgresInbox({ pool: fx.pool, schema: fx.schema, purgePauseRatio: -1 }),
    ).toThrow(/purgePauseRatio/);
  });
});
