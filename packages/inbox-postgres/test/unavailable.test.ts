import { createHmac } from 'node:crypto';
import { createMemoryTransport } from '@onceflow/core/testing';
import { createReceiver, StoreUnavailableError, stripe, UsageError } from '@onceflow/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresInbox, markProcessed, migrate } from '../src/index.js';
import { closedPort, createPool, envelope, randomSchema } from './helpers.js';

describe('when PostgreSQL cannot be reached', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/test`,
      connectionTimeoutMillis: 2000,
    });
  });
  afterAll(() => pool.end());

  const expectUnavailable = async (work: Promise<unknown>) => {
    const err = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as StoreUnavailableError).code).toBe('STORE_UNAVAILABLE');
    expect((err as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
  };

  it('claim rejects with StoreUnavailableError (the receiver answers 503)', async () => {
    const store = createPostgresInbox({ pool });
    await expectUnavailable(store.claim(envelope(), { leaseMs: 1000 }));
  });

  it('a receiver over it answers a signed webhook with 503 and Retry-After', async () => {
    const transport = createMemoryTransport();
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: ['whsec_test'] }) },
      inbox: createPostgresInbox({ pool }),
      transport,
    });
    const t = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ id: 'evt_503', type: 'charge.succeeded', created: t, data: {} });
    const v1 = createHmac('sha256', 'whsec_test').update(`${t}.${body}`).digest('hex');
    const res = await receiver.fetch(
      new Request('http://localhost/webhooks/stripe', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${v1}` },
        body,
      }),
    );
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).not.toBeNull();
    await transport.close();
  });

  it('every other method rejects the same way', async () => {
    const store = createPostgresInbox({ pool });
    await expectUnavailable(store.markEnqueued('stripe', 'evt', 'token'));
    await expectUnavailable(store.release('stripe', 'evt', 'token'));
    await expectUnavailable(store.takeStale({ olderThanMs: 0, leaseMs: 1000, limit: 10 }));
    await expectUnavailable(store.recordConflict(envelope()));
    await expectUnavailable(store.purge({ olderThan: new Date() }));
    await expectUnavailable(store.stats());
    await expectUnavailable(store.begin(envelope(), { leaseMs: 1000, attempt: 1 }));
    await expectUnavailable(store.extend('stripe', 'evt', 'token', 1000));
    await expectUnavailable(store.complete('stripe', 'evt', 'token'));
    const nextAttemptAt = new Date();
    await expectUnavailable(store.scheduleRetry('stripe', 'evt', 'token', { nextAttemptAt }));
    await expectUnavailable(store.deadLetter(envelope(), undefined, { reason: 'r', attempts: 1 }));
    await expectUnavailable(store.get('stripe', 'evt'));
    await expectUnavailable(store.list({ state: 'dead-lettered', limit: 10 }));
    await expectUnavailable(store.count({ state: 'dead-lettered' }));
    await expectUnavailable(store.act('stripe', 'evt', { kind: 'redriven', actor: 'cli:a' }));
    await expectUnavailable(migrate(pool, { schema: randomSchema() }));
  });
});

describe('when the tables were never migrated', () => {
  const pool = createPool(1);
  afterAll(() => pool.end());

  it('rejects with StoreUnavailableError that says to run migrate()', async () => {
    const store = createPostgresInbox({ pool, schema: randomSchema() });
    const err = await store.claim(envelope(), { leaseMs: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toMatch(/run migrate\(\) first/);
    expect((err as Error).cause).toMatchObject({ code: '42P01' });
  });

  it('markProcessed rejects with UsageError: a missing table there is the wrong location', async () => {
    const client = await pool.connect();
    try {
      const err = await markProcessed(client, { source: 's', id: '1' }, { schema: randomSchema() })
        .then(() => undefined)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toMatch(/no inbox table .*pass the \{ schema, table \}/);
    } finally {
      client.release();
    }
  });
});
