/**
 * The event record vs the processed-guard it replaced, at the store: same database, same
 * concurrency, one run, rounds alternating so background noise hits both alike (best round kept).
 *
 *   guard    the previous release's statements on a table made by migration 001, as they were
 *   record   this store on a table made by every migration
 *
 * Workloads, each event a fresh id:
 *   delivery  an event the receiver enqueued is delivered once: begin, then complete
 *   webhook   the receiver's claim, then markEnqueued (one statement each, batching off on both
 *             sides: the guard's batched statements are gone, so single rows compare like for like)
 *
 * Prints, per side, events/s and what an event cost: CPU of its PostgreSQL backends (each side
 * has its own pool, told apart by application_name) and WAL written (cluster-wide: anything else
 * writing counts too). On a busy machine events/s swings between rounds; the CPU per event moves
 * far less. The aims: delivery ≥ 0.9×, webhook ≥ 0.95× the guard. Never fails on a time.
 * Env: ONCEFLOW_PG_URL, BENCH_EVENTS (per round, default 3000),
 * BENCH_ROUNDS (default 3), BENCH_CONCURRENCY (default 16), BENCH_POOL_MAX (default 8).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createEnvelope, type Envelope } from '@onceflow/core';
import { encodeEnvelope } from '@onceflow/core/kit';
import pg from 'pg';
import { createPostgresInbox, migrate, type PostgresInbox } from '../src/index.js';
import { applyMigrations } from '../src/migrate.js';
import { loadMigrations } from '../src/migrations.js';
import { backendPids, processCpuMs, walBytes } from './cpu.js';

const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const POOL_MAX = Number(process.env.BENCH_POOL_MAX ?? 8);
const LEASE_MS = 60_000;

/** One side of the comparison: what a delivery and a webhook cost there. */
interface Side {
  deliver(envelope: Envelope): Promise<void>;
  webhook(envelope: Envelope): Promise<void>;
}

/** The processed-guard's statements as the release before the record shipped them (001). */
function guardSide(pool: pg.Pool, schema: string): Side {
  const t = `"${schema}".onceflow_inbox`;
  const ms = (p: string) => `now() + (${p}::float8 * interval '1 millisecond')`;
  const q = (name: string, text: string, values: unknown[]) =>
    pool.query({ name: `guard_${name}`, text, values });
  return {
    async deliver(env) {
      const token = randomUUID();
      const begun = await q(
        'begin',
        `INSERT INTO ${t} AS t (source, id, state, received_at, proc_token, proc_expires_at)
         VALUES ($1, $2, 'enqueued', now(), $3, ${ms('$4')})
         ON CONFLICT (source, id) DO UPDATE
           SET proc_token = EXCLUDED.proc_token, proc_expires_at = EXCLUDED.proc_expires_at
           WHERE t.state <> 'processed' AND (t.proc_expires_at IS NULL OR t.proc_expires_at <= now())
         RETURNING 1`,
        [env.source, env.id, token, LEASE_MS],
      );
      if (begun.rowCount !== 1) throw new Error('guard: not acquired');
      await q(
        'complete',
        `UPDATE ${t} SET state = 'processed', processed_at = now(), proc_token = NULL,
           proc_expires_at = NULL, lease_token = NULL, lease_expires_at = NULL
         WHERE source = $1 AND id = $2 AND proc_token = $3 AND state <> 'processed'`,
        [env.source, env.id, token],
      );
    },
    async webhook(env) {
      const token = randomUUID();
      await q(
        'claim',
        `INSERT INTO ${t} (source, id, state, payload_hash, envelope, received_at, lease_token, lease_expires_at)
         VALUES ($1, $2, 'pending', $3, $4, $5, $6, ${ms('$7')})
         ON CONFLICT (source, id) DO NOTHING RETURNING 1`,
        [env.source, env.id, env.payloadHash, encodeEnvelope(env), new Date(), token, LEASE_MS],
      );
      await q(
        'enqueued',
        `UPDATE ${t} SET state = 'enqueued', enqueued_at = now(), lease_token = NULL, lease_expires_at = NULL
         FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
         WHERE source = $1 AND id = $2 AND state = 'pending' AND lease_token = $3`,
        [env.source, env.id, token],
      );
    },
  };
}

function recordSide(store: PostgresInbox): Side {
  return {
    async deliver(env) {
      const r = await store.begin(env, { leaseMs: LEASE_MS, attempt: 1, consumer: 'bench' });
      if (r.status !== 'acquired') throw new Error(`record: ${r.status}`);
      await store.complete(env.source, env.id, r.token);
    },
    async webhook(env) {
      const r = await store.claim(env, { leaseMs: LEASE_MS });
      if (r.status !== 'new') throw new Error(`record: claim ${r.status}`);
      await store.markEnqueued(env.source, env.id, r.token);
    },
  };
}

/** Leaves `envs` as the receiver does (claimed, then enqueued), 500 at a time. */
async function seed(side: Side, envs: readonly Envelope[]) {
  for (let i = 0; i < envs.length; i += 500) {
    await Promise.all(envs.slice(i, i + 500).map((e) => side.webhook(e)));
  }
}

let seq = 0;
const run = randomBytes(3).toString('hex');
/** `count` fresh Stripe-sized envelopes. */
const events = (count: number): Envelope[] =>
  Array.from({ length: count }, () => {
    seq += 1;
    return createEnvelope({
      id: `evt_${run}_${seq}`,
      source: 'stripe',
      type: 'charge.succeeded',
      key: `cus_${seq % 100}`,
      payload: { id: `evt_${run}_${seq}`, type: 'charge.succeeded', data: { amount: 4200 } },
      headers: { traceparent: `00-${randomBytes(16).toString('hex')}-${'1'.repeat(16)}-01` },
    });
  });

interface Measured {
  readonly perSecond: number;
  /** CPU of the side's PostgreSQL backends per event, µs. */
  readonly postgresUs: number;
  /** WAL per event, bytes (cluster-wide). */
  readonly walBytes: number;
}

/** Runs `work` over `envs` with `CONCURRENCY` loops and measures it. */
async function measure(
  admin: pg.Pool,
  appName: string,
  envs: readonly Envelope[],
  work: (e: Envelope) => Promise<void>,
): Promise<Measured> {
  const pids = await backendPids(admin, appName);
  const cpu = () => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const [cpuBefore, walBefore] = [cpu(), await walBytes(admin)];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < envs.length) await work(envs[next++] as Envelope);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    perSecond: envs.length / seconds,
    postgresUs: ((cpu() - cpuBefore) * 1000) / envs.length,
    walBytes: ((await walBytes(admin)) - walBefore) / envs.length,
  };
}

const format = (m: Measured) =>
  `${m.perSecond.toFixed(0).padStart(5)}/s  postgres ${Math.round(m.postgresUs)} µs/event  ~${Math.round(m.walBytes)} B WAL/event`;

/** The better of two measurements of one side: the lower cost, the higher rate. */
const better = (a: Measured | undefined, b: Measured): Measured =>
  a === undefined
    ? b
    : {
        perSecond: Math.max(a.perSecond, b.perSecond),
        postgresUs: Math.min(a.postgresUs, b.postgresUs),
        walBytes: Math.min(a.walBytes, b.walBytes),
      };

async function main() {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  const pools = {
    guard: sidePool(`onceflow_bench_guard_${run}`),
    record: sidePool(`onceflow_bench_record_${run}`),
  };
  const schemas = { guard: `onceflow_bench_guard_${run}`, record: `onceflow_bench_record_${run}` };
  try {
    const first = (await loadMigrations()).filter((m) => m.name === '001_inbox');
    await applyMigrations(admin, { schema: schemas.guard }, first);
    await migrate(admin, { schema: schemas.record });
    const store = createPostgresInbox({
      pool: pools.record,
      schema: schemas.record,
      batching: false,
    });
    const sides = { guard: guardSide(pools.guard, schemas.guard), record: recordSide(store) };
    type Name = keyof typeof sides;
    const best: Record<'delivery' | 'webhook', Partial<Record<Name, Measured>>> = {
      delivery: {},
      webhook: {},
    };
    for (const name of ['guard', 'record'] as const) {
      // Open every pooled connection and prepare the statements on each before measuring.
      await seed(sides[name], events(POOL_MAX * 4));
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['guard', 'record'] as const) {
        const side = sides[name];
        const app = `onceflow_bench_${name}_${run}`;
        const webhook = await measure(admin, app, events(EVENTS), (e) => side.webhook(e));
        const enqueued = events(EVENTS);
        await seed(side, enqueued);
        const delivery = await measure(admin, app, enqueued, (e) => side.deliver(e));
        best.webhook[name] = better(best.webhook[name], webhook);
        best.delivery[name] = better(best.delivery[name], delivery);
        console.log(`round ${round + 1} ${name.padEnd(6)} webhook  ${format(webhook)}`);
        console.log(`round ${round + 1} ${name.padEnd(6)} delivery ${format(delivery)}`);
      }
    }
    console.log('best of the rounds:');
    for (const workload of ['delivery', 'webhook'] as const) {
      const { guard, record } = best[workload] as Record<Name, Measured>;
      console.log(`${workload.padEnd(8)} guard  ${format(guard)}`);
      console.log(`${workload.padEnd(8)} record ${format(record)}`);
      console.log(
        `${workload.padEnd(8)} record/guard: rate ${(record.perSecond / guard.perSecond).toFixed(2)}×, postgres cpu ${(record.postgresUs / guard.postgresUs).toFixed(2)}×, WAL ${(record.walBytes / guard.walBytes).toFixed(2)}×`,
      );
    }
    for (const [name, schema] of Object.entries(schemas)) {
      const res = await admin.query<{ upd: number; hot: number }>(
        `SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
         WHERE schemaname = $1 AND relname = 'onceflow_inbox'`,
        [schema],
      );
      const { upd = 0, hot = 0 } = res.rows[0] ?? {};
      console.log(`${name.padEnd(6)} heap-only (HOT) updates: ${hot} of ${upd}`);
    }
  } finally {
    for (const schema of Object.values(schemas)) {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
    await Promise.all([admin.end(), pools.guard.end(), pools.record.end()]);
  }
}

/** A side's own pool: its backends are told apart by application_name, and never idle out. */
function sidePool(appName: string): pg.Pool {
  return new pg.Pool({
    connectionString: PG_URL,
    max: POOL_MAX,
    idleTimeoutMillis: 0,
    application_name: appName,
  });
}

await main();
