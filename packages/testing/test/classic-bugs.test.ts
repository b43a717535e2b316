import { defineHandler, type HandlerContext } from '@onceflow/core';
import { markProcessedInTransaction } from '@onceflow/embedded';
import { describe, expect, test } from 'vitest';
import {
  checkEffectivelyOnce,
  type EffectivelyOnceViolation,
  isEffectivelyOnceViolation,
} from '../src/index.js';
import {
  FakePaymentsApi,
  oneRowPerEvent,
  type Payment,
  payments,
  rowsPerEvent,
  sqliteLedger,
} from './fixtures.js';

/** The violation `promise` rejects with; fails the test when it resolves. */
async function violation(promise: Promise<void>): Promise<EffectivelyOnceViolation> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isEffectivelyOnceViolation(err)) throw new Error(`expected a violation, got ${String(err)}`);
  return err;
}

/** Any of these words in the timeline names a fault that runs a handler again. */
const REDELIVERY_FAULT = /crash after effect, before the record|lock expires mid-handler/;

describe('an effect written outside the same transaction as the processed mark', () => {
  const buggy = (embedded: Awaited<ReturnType<typeof sqliteLedger>>) =>
    defineHandler({
      type: 'payment',
      handle: async (event, ctx) => {
        const { amount } = event as Payment;
        const insert = embedded.db.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)');
        embedded.db.transaction(() => insert.run(ctx.envelope.id, amount)).immediate();
        // The mark in a transaction of its own: a losing attempt has already written its row.
        embedded.db.transaction(() => markProcessedInTransaction(embedded.db, ctx)).immediate();
      },
    });
  const fixed = (embedded: Awaited<ReturnType<typeof sqliteLedger>>) =>
    defineHandler({
      type: 'payment',
      handle: async (event, ctx) => {
        const { amount } = event as Payment;
        const insert = embedded.db.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)');
        embedded.db
          .transaction((c: HandlerContext) => {
            markProcessedInTransaction(embedded.db, c); // throws → nothing is written
            insert.run(c.envelope.id, amount);
          })
          .immediate(ctx);
      },
    });
  const options = {
    events: payments,
    setup: sqliteLedger,
    records: (embedded: Awaited<ReturnType<typeof sqliteLedger>>) => embedded.records,
    teardown: (embedded: Awaited<ReturnType<typeof sqliteLedger>>) => embedded.close(),
    invariant: (embedded: Awaited<ReturnType<typeof sqliteLedger>>) =>
      oneRowPerEvent(rowsPerEvent(embedded), payments),
  };

  test('is caught, and the timeline names the fault (SQLite, markProcessedInTransaction)', async () => {
    const err = await violation(checkEffectivelyOnce(buggy, options));
    expect(err.reason).toMatch(/ledger has 2 rows for evt_/);
    expect(err.message).toMatch(/lock expires mid-handler \(before-handler\)/);
    expect(err.message).toMatch(
      /resume evt_\d attempt 1 · lock lost · handler threw (ALREADY_PROCESSED|LOCK_LOST)/,
    );
  });

  test('the fix (the row and the mark in one transaction) passes', async () => {
    await checkEffectivelyOnce(fixed, options);
  });
});

describe('a non-idempotent downstream call without ctx.idempotencyKey', () => {
  const handler = (withKey: boolean) => (api: FakePaymentsApi) =>
    defineHandler({
      type: 'payment',
      handle: async (event, ctx) => {
        const { amount } = event as Payment;
        const key = withKey ? ctx.idempotencyKey('charge') : undefined;
        await api.charge({ eventId: ctx.envelope.id, amount }, key);
      },
    });
  const options = {
    events: payments,
    setup: () => new FakePaymentsApi(),
    invariant: (api: FakePaymentsApi) => {
      for (const e of payments) {
        const n = api.chargesFor(e.id);
        if (n !== 1) return `${e.id} was charged ${n} times`;
      }
    },
  };

  test('is caught, and the timeline names the fault', async () => {
    const err = await violation(checkEffectivelyOnce(handler(false), options));
    expect(err.reason).toMatch(/evt_\d was charged 2 times/);
    expect(err.message).toMatch(REDELIVERY_FAULT);
    expect(err.faults).toHaveLength(1);
  });

  test('the fix (Idempotency-Key from ctx.idempotencyKey) passes', async () => {
    await checkEffectivelyOnce(handler(true), options);
  });
});

describe('a counter incremented on redelivery', () => {
  interface Counters {
    views: number;
    readonly counted: Set<string>;
  }
  const handler = (dedupe: boolean) => (state: Counters) =>
    defineHandler({
      type: 'payment',
      handle: async (_event, ctx) => {
        // Fixed: the event id is checked and the counter bumped in one atomic step.
        if (dedupe && state.counted.has(ctx.envelope.id)) return;
        state.counted.add(ctx.envelope.id);
        state.views += 1;
      },
    });
  const options = {
    events: payments,
    setup: (): Counters => ({ views: 0, counted: new Set() }),
    invariant: (state: Counters) =>
      state.views === payments.length ||
      `counter is ${state.views} for ${payments.length} distinct events`,
  };

  test('is caught, and the timeline names the fault', async () => {
    const err = await violation(checkEffectivelyOnce(handler(false), options));
    expect(err.reason).toBe('counter is 4 for 3 distinct events');
    expect(err.message).toMatch(REDELIVERY_FAULT);
  });

  test('the fix (counting each event id once) passes', async () => {
    await checkEffectivelyOnce(handler(true), options);
  });
});

describe('a handler that trusts arrival order', () => {
  interface Account {
    status: string | undefined;
    version: number;
  }
  const handler = (checkVersion: boolean) => (account: Account) =>
    defineHandler({
      type: 'payment',
      handle: async (event) => {
        const p = event as Payment;
        if (checkVersion && p.version <= account.version) return; // stale: a newer one was applied
        account.status = p.status;
        account.version = p.version;
      },
    });
  const options = {
    events: payments,
    setup: (): Account => ({ status: undefined, version: 0 }),
    invariant: (account: Account) =>
      account.status === 'status_3' ||
      `account status is ${account.status} after version 3 was delivered`,
  };

  test('is caught, and the timeline names the fault', async () => {
    const err = await violation(checkEffectivelyOnce(handler(false), options));
    expect(err.reason).toMatch(/account status is status_[12] after version 3/);
    expect(err.message).toMatch(/delayed \d+ms \(reordered\)|transient failure|crash|lock expires/);
    expect(err.faults).toHaveLength(1);
  });

  test('the fix (apply only a newer version) passes', async () => {
    await checkEffectivelyOnce(handler(true), options);
  });
});
