import { isOnceflowError } from '@onceflow/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresInbox } from '../src/index.js';
import { fixture } from './helpers.js';

describe('check (readiness)', () => {
  it('answers while PostgreSQL does', async () => {
    await using fx = await fixture({ max: 2 });
    await expect(fx.store.check(AbortSignal.timeout(5_000))).resolves.toBeUndefined();
  });

  it('rejects with StoreUnavailableError when PostgreSQL is unreachable', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });
    pool.on('error', () => undefined);
    const store = createPostgresInbox({ pool });
    const err = await store.check(AbortSignal.timeout(5_000)).catch((e: unknown) => e);
    expect(isOnceflowError(err, 'STORE_UNAVAILABLE')).toBe(true);
    await pool.end();
  });
});
