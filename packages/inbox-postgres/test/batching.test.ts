import { ConfigError, type Envelope, StoreUnavailableError } from '@onceflow/core';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresInbox, type PostgresInbox, type PostgresInboxConfig } from '../src/index.js';
import {
  createPool,
  envelope,
  type Fixture,
  fixture,
  leasesEnded,
  randomSchema,
} from './helpers.js';

const LEASE = { leaseMs: 60_000 };

/** The real pool, recording the short name of every statement the store sends through it. */
function recordingPool(pool: pg.Pool, sent: string[]): pg.Pool {
  return new Proxy(pool, {
    get(target, prop) {
      if (prop !== 'query') return Reflect.get(target, prop, target);
      return (config: pg.QueryConfig, ...rest: unknown[]) => {
        sent.push(/^onceflow_(.+)_[0-9a-f]{10}$/.exec(config.name ?? '')?.[1] ?? '?');
        return (target.query as (...args: unknown[]) => unknown)(config, ...rest);
      };
    },
  });
}

function batchedStore(
  fx: Fixture,
  batching: PostgresInboxConfig['batching'] = { maxBatch: 64, maxInFlight: 1 },
) {
  const sent: string[] = [];
  const store = createPostgresInbox({
    pool: recordingPool(fx.pool, sent),
    schema: fx.schema,
    batching,
  });
  const count = (name: string) => sent.filter((s) => s === name).length;
  return { store, sent, count };
}

/** Claims every envelope in the same tick, so they queue for the same statements. */
const claimAll = (store: PostgresInbox, envs: readonly Envelope[]) =>
  Promise.all(envs.map((e) => store.claim(e, LEASE)));

const tokenOf = (r: Awaited<ReturnType<PostgresInbox['claim']>>): string => {
  if (r.status !== 'new' && r.status !== 'stale-pending') throw new Error(`no token: ${r.status}`);
  return r.token;
};

async function rowsOf(fx: Fixture, ids: readonly string[]) {
  const res = await fx.pool.query<{ id: string; state: string; lease_token: string | null }>(
    `SELECT id, state, lease_token FROM "${fx.schema}".onceflow_inbox WHERE id = ANY($1)`,
    [ids],
  );
  return new Map(res.rows.map((r) => [r.id, r]));
}

/** Rejects if `work` has not settled within `ms`, so a wait that should not happen fails fast. */
const within = <T>(ms: number, work: Promise<T>): Promise<T> =>
  Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms).unref(),
    ),
  ]);

describe('batching', () => {
  it('claims of many distinct ids at once each get their own new token, in few statements', async () => {
    await using fx = await fixture();
    const { store, count } = batchedStore(fx);
    const envs = Array.from({ length: 150 }, () => envelope());
    const results = await claimAll(store, envs);
    expect(results.every((r) => r.status === 'new')).toBe(true);
    const tokens = results.map(tokenOf);
    expect(new Set(tokens).size).toBe(150);
    expect(count('claim_ins_b')).toBe(3); // 64 + 64 + 22, one statement in flight at a time
    expect(count('claim_ins')).toBe(0);

    const rows = await rowsOf(
      fx,
      envs.map((e) => e.id),
    );
    for (const [i, e] of envs.entries()) expect(rows.get(e.id)?.lease_token).toBe(tokens[i]);

    await Promise.all(envs.map((e, i) => store.markEnqueued(e.source, e.id, tokens[i] as string)));
    expect(count('enqueued_b')).toBe(3);
    expect(await store.stats()).toMatchObject({ pending: 0, enqueued: 150 });
  });

  it('the batched statements are planned once per connection, not on every call', async () => {
    // PostgreSQL plans a prepared statement's first five calls with their values, then keeps a
    // generic plan unless the custom ones look cheaper. One connection, so one backend's plans.
    await using fx = await fixture({ max: 1 });
    // Rows enough that a plan's cost follows the rows it expects from the batch.
    await fx.pool.query(
      `INSERT INTO "${fx.schema}".onceflow_inbox (source, id, state, received_at)
       SELECT 'fill', 'evt_' || i, 'completed', now() FROM generate_series(1, 5000) AS i`,
    );
    const { store, count } = batchedStore(fx);
    for (let round = 0; round < 8; round++) {
      const envs = Array.from({ length: 5 }, () => envelope());
      const tokens = (await claimAll(store, envs)).map(tokenOf);
      await Promise.all(
        envs.map((e, i) => store.markEnqueued(e.source, e.id, tokens[i] as string)),
      );
    }
    expect([count('claim_ins_b'), count('enqueued_b')]).toEqual([8, 8]);
    const plans = await fx.pool.query<{ name: string; generic_plans: string }>(
      `SELECT name, generic_plans FROM pg_prepared_statements WHERE name ~ '^onceflow_(claim_ins|enqueued)_b_'`,
    );
    expect(
      plans.rows
        .map((r) => [r.name.replace(/_[0-9a-f]{10}$/, ''), Number(r.generic_plans) > 0])
        .sort(),
    ).toEqual([
      ['onceflow_claim_ins_b', true],
      ['onceflow_enqueued_b', true],
    ]);
  });

  it('a lone caller runs the single-row statements, as without batching', async () => {
    await using fx = await fixture();
    const { store, sent } = batchedStore(fx, {});
    const env = envelope();
    const token = tokenOf(await store.claim(env, LEASE));
    await store.markEnqueued(env.source, env.id, token);
    expect(sent).toEqual(['claim_ins', 'enqueued']);
  });

  it('a delivery costs two statements (begin, then complete, scheduleRetry or deadLetter); a duplicate two', async () => {
    await using fx = await fixture();
    const { store, sent } = batchedStore(fx, {});
    const lease = async (env: Envelope, attempt: number) => {
      const r = await store.begin(env, { ...LEASE, attempt, consumer: 'w' });
      if (r.status !== 'acquired') throw new Error(`begin: ${r.status}`);
      return r.token;
    };
    const env = envelope();
    await store.markEnqueued(env.source, env.id, tokenOf(await store.claim(env, LEASE)));
    sent.length = 0;
    await store.complete(env.source, env.id, await lease(env, 1));
    expect(sent, 'a delivery that succeeds').toEqual(['begin', 'complete']);
    sent.length = 0;
    expect(await store.begin(env, { ...LEASE, attempt: 2 })).toEqual({ status: 'processed' });
    expect(sent, 'a duplicate delivery: the upsert, then why').toEqual(['begin', 'begin_old']);

    const failing = envelope();
    sent.length = 0;
    const error = { code: 'RETRY_LATER' as const, name: 'RetryLaterError', message: '503' };
    await store.scheduleRetry(failing.source, failing.id, await lease(failing, 1), {
      error,
      nextAttemptAt: new Date(Date.now() + 1000),
    });
    await store.deadLetter(failing, await lease(failing, 2), {
      reason: 'attempts exhausted',
      attempts: 2,
      error,
    });
    expect(sent, 'a retry, then a dead letter').toEqual(['begin', 'retry', 'begin', 'dead']);
    sent.length = 0;
    expect(await store.begin(failing, { ...LEASE, attempt: 3 })).toEqual({
      status: 'dead-lettered',
    });
    expect(sent, "the broker's copy of a dead letter").toEqual(['begin', 'begin_old']);
  });

  it('claims of one new id inside a batch: the first is new, same bytes in-flight, other bytes conflict', async () => {
    await using fx = await fixture();
    const { store, count } = batchedStore(fx);
    const a = envelope({ payload: '{"v":1}' });
    const b = envelope({ id: a.id, payload: '{"v":2}' });
    const others = Array.from({ length: 10 }, () => envelope());
    const envs = [a, others[0], b, a, ...others.slice(1, 5), b, a, ...others.slice(5), a, b];
    const results = await claimAll(store, envs as Envelope[]);

    expect(results[0]?.status).toBe('new');
    for (const [i, e] of envs.entries()) {
      if (i === 0) continue;
      if (e === a) expect(results[i]).toEqual({ status: 'in-flight' });
      else if (e === b)
        expect(results[i]).toEqual({ status: 'conflict', existingHash: a.payloadHash });
      else expect(results[i]?.status).toBe('new');
    }
    expect(count('claim_ins_b')).toBe(1);
    expect(count('claim_old')).toBe(0); // answered from the batch, no second statement
    const row = (await rowsOf(fx, [a.id])).get(a.id);
    expect(row?.lease_token).toBe(tokenOf(results[0]!));
  });

  it('claims of a stored id inside a batch each go the slow path: duplicates, one stale takeover', async () => {
    await using fx = await fixture({ max: 10 });
    const { store } = batchedStore(fx);
    const done = envelope();
    await store.markEnqueued(done.source, done.id, tokenOf(await store.claim(done, LEASE)));
    const stale = envelope();
    await store.claim(stale, { leaseMs: 1 });
    await leasesEnded(fx);

    const [f0, f1, f2, f3, f4] = Array.from({ length: 5 }, () => envelope());
    const sequence = [done, stale, f0, stale, done, f1, stale, f2, done, stale, stale, f3, f4];
    const results = await claimAll(store, sequence as Envelope[]);
    const of = (env: Envelope) =>
      results.filter((_, i) => sequence[i] === env).map((r) => r.status);
    expect(of(done)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    expect(of(stale).filter((s) => s === 'stale-pending')).toHaveLength(1);
    expect(of(stale).filter((s) => s === 'in-flight')).toHaveLength(4);
    for (const f of [f0, f1, f2, f3, f4]) expect(of(f as Envelope)).toEqual(['new']);
  });

  it('a failing batch rejects each of its callers with its own StoreUnavailableError', async () => {
    await using fx = await fixture();
    const sent: string[] = [];
    const store = createPostgresInbox({
      pool: recordingPool(fx.pool, sent),
      schema: randomSchema(), // never migrated: every statement fails
      batching: { maxInFlight: 1 },
    });
    const claims = await Promise.all(
      Array.from({ length: 20 }, () => store.claim(envelope(), LEASE).catch((e: unknown) => e)),
    );
    const marks = await Promise.all(
      ['a', 'b', 'c'].map((id) => store.markEnqueued('stripe', id, 't').catch((e: unknown) => e)),
    );
    expect(sent).toEqual(['claim_ins_b', 'enqueued_b']); // one statement each, shared
    for (const err of [...claims, ...marks]) {
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as Error).cause).toMatchObject({ code: '42P01' });
    }
    expect(new Set(claims).size).toBe(20); // each caller its own error object
  });

  it('markEnqueued in a batch marks only the rows whose token it names', async () => {
    await using fx = await fixture();
    const { store, count } = batchedStore(fx);
    const envs = Array.from({ length: 6 }, () => envelope());
    const tokens = (await claimAll(store, envs)).map(tokenOf);
    const [e0, e1, e2, e3, e4] = envs as [Envelope, Envelope, Envelope, Envelope, Envelope];
    await Promise.all([
      store.markEnqueued(e0.source, e0.id, tokens[0] as string),
      store.markEnqueued(e1.source, e1.id, tokens[1] as string),
      store.markEnqueued(e2.source, e2.id, tokens[2] as string),
      store.markEnqueued(e3.source, e3.id, 'not-the-token'),
      store.markEnqueued(e4.source, e4.id, tokens[5] as string), // another claim's token
    ]);
    expect(count('enqueued_b')).toBe(1);
    const rows = await rowsOf(
      fx,
      envs.map((e) => e.id),
    );
    for (const [i, e] of envs.entries()) {
      const expected =
        i < 3
          ? { state: 'enqueued', lease_token: null }
          : { state: 'received', lease_token: tokens[i] };
      expect(rows.get(e.id)).toMatchObject(expected);
    }
  });

  it('a batch that meets another transaction’s lock lets its other callers through; the locked one waits alone', async () => {
    await using fx = await fixture({ max: 10 });
    const { store, count } = batchedStore(fx);
    const blocker = await fx.pool.connect();
    try {
      // A claim: another transaction is inserting the same id and has not committed.
      const [x, ...rest] = Array.from({ length: 4 }, () => envelope()) as [Envelope, ...Envelope[]];
      await blocker.query('BEGIN');
      await blocker.query(
        `INSERT INTO "${fx.schema}".onceflow_inbox (source, id, state, received_at)
         VALUES ($1, $2, 'enqueued', now())`,
        [x.source, x.id],
      );
      let xSettled = false;
      const xClaim = store.claim(x, LEASE).finally(() => {
        xSettled = true;
      });
      const restClaims = claimAll(store, rest);
      const restTokens = (await within(5000, restClaims)).map(tokenOf);
      expect(xSettled).toBe(false);
      await blocker.query('ROLLBACK');
      const xToken = tokenOf(await within(5000, xClaim));
      expect(count('claim_ins_b')).toBe(1); // gave up on the lock, then each went alone
      expect(count('claim_ins')).toBe(4);

      // markEnqueued: a handler's open transaction holds x's row.
      await blocker.query('BEGIN');
      await blocker.query(
        `UPDATE "${fx.schema}".onceflow_inbox SET proc_token = 'worker' WHERE id = $1`,
        [x.id],
      );
      let xMarked = false;
      const xMark = store.markEnqueued(x.source, x.id, xToken).finally(() => {
        xMarked = true;
      });
      await within(
        5000,
        Promise.all(
          rest.map((e, i) => store.markEnqueued(e.source, e.id, restTokens[i] as string)),
        ),
      );
      expect(xMarked).toBe(false);
      expect((await store.stats()).enqueued).toBe(3);
      await blocker.query('COMMIT');
      await within(5000, xMark);
      expect(await store.stats()).toMatchObject({ pending: 0, enqueued: 4 });
    } finally {
      blocker.release();
    }
  });

  it('batches of two processes sharing ids in opposite orders both complete: one new per id', async () => {
    await using fx = await fixture();
    const otherPool = createPool(4);
    try {
      const one = createPostgresInbox({ pool: fx.pool, schema: fx.schema });
      const two = createPostgresInbox({ pool: otherPool, schema: fx.schema });
      for (let round = 0; round < 5; round++) {
        const envs = Array.from({ length: 40 }, () => envelope());
        const [a, b] = await Promise.all([claimAll(one, envs), claimAll(two, [...envs].reverse())]);
        const news = envs.map(
          (_, i) => [a[i], b[envs.length - 1 - i]].filter((r) => r?.status === 'new').length,
        );
        expect(news.every((n) => n === 1)).toBe(true);
      }
    } finally {
      await otherPool.end();
    }
  });

  it('refuses invalid batching options', async () => {
    await using fx = await fixture();
    const make = (batching: unknown) => () =>
      createPostgresInbox({ pool: fx.pool, batching: batching as PostgresInboxConfig['batching'] });
    expect(make({ maxBatch: 0 })).toThrow(ConfigError);
    expect(make({ maxInFlight: 1.5 })).toThrow(ConfigError);
    expect(make({ maxBatch: 10, extra: 1 })).toThrow(ConfigError);
    expect(make(false)).not.toThrow();
  });
});
