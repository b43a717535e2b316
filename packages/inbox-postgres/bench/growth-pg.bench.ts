/**
 * The PostgreSQL inbox as it grows: the receiver's path on a table holding four days of events
 * beside an empty one, and retention of a day while claims go on. Same database, one run.
 *
 *   claim      the receiver's path through the store: claim then markEnqueued of a fresh event
 *              (random id, as senders' ids are), at a paced rate: half the closed-loop maximum
 *              of one pool on the empty table. Latency runs from each call's due time (open
 *              loop), so a stall is charged to every call queued behind it.
 *   empty      a table made by migrate(), nothing in it
 *   full       the same with BENCH_ROWS rows (default 10M: four days at ~30 events/s) received
 *              over the four days before now, filled in SQL (INSERT … SELECT generate_series),
 *              with the indexes built after the fill, then ANALYZE: almost all completed, one in
 *              10,000 dead-lettered, one in 50,000 still enqueued, the last 100 received;
 *              autovacuum off on it, so a background vacuum of the fill lands in no round
 *   purge      store.purge({ olderThan }) of a day (a quarter of the rows), through the same
 *              pool while the paced claims go on, once per pause ratio in BENCH_PURGE_RATIOS
 *              (default 0, then the store's default `purgePauseRatio`): the oldest day at the
 *              first ratio, the next day at the second, and so on, with a VACUUM of the table
 *              between them (autovacuum is off on it; in life it would clean up behind a
 *              purge). For each: a paced round of BENCH_WITHOUT_MS on the full table just
 *              before it (the "without": as long as a purge, so both see as much of the
 *              machine's other work), its run time and rows/s, claim p99 during it, how often the store's
 *              connections waited on a lock (pg_locks sampled every 100 ms), and a round after
 *              it. Before the first, the plan of one purge batch (EXPLAIN ANALYZE, rolled back)
 *
 * Rounds alternate empty and full (median p99 kept). The aims: claim p99 on the full table within
 * 1.5× of the empty one; during the purge within 2× of without. Prints; never fails on a time.
 * Schemas of its own, dropped at the end. Env: ONCEFLOW_PG_URL, BENCH_ROWS (default 10000000),
 * BENCH_PAYLOAD_BYTES (of each event's payload, default 300), BENCH_PACED_MS (per round, default
 * 5000), BENCH_ROUNDS (default 3), BENCH_POOL_MAX (default 8), BENCH_PURGE_RATIOS (pause ratios,
 * comma-separated, default `0,<the default>`; at most four, a day each), BENCH_PURGE_BATCH (the
 * purge's `purgeBatchSize`, default the store's 1000), BENCH_WITHOUT_MS (default 30000).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { printCosts } from '../../core/bench/cost-rows.js';
import {
  countLabel,
  DAY_MS,
  envelopeTemplate,
  freshEvent,
  median,
  pacedLine,
  retainedHistories,
  SPAN_MS,
} from '../../core/bench/growth-events.js';
import { runPacedCalls } from '../../core/bench/paced-calls.js';
import { DEFAULT_PURGE_PAUSE_RATIO } from '../src/config.js';
import { createPostgresInbox, migrate, type PostgresInbox } from '../src/index.js';
import { DEFAULT_TABLE, inboxNames } from '../src/names.js';
import { inboxStatements } from '../src/statements.js';

const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.BENCH_ROWS ?? 10_000_000);
const PAYLOAD_BYTES = Number(process.env.BENCH_PAYLOAD_BYTES ?? 300);
const PACED_MS = Number(process.env.BENCH_PACED_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const POOL_MAX = Number(process.env.BENCH_POOL_MAX ?? 8);
const PURGE_RATIOS = (process.env.BENCH_PURGE_RATIOS ?? `0,${DEFAULT_PURGE_PAUSE_RATIO}`)
  .split(',')
  .map(Number)
  .slice(0, 4);
const MAX_MS = 3000;
const CONCURRENCY = 32;
const LEASE_MS = 30_000;
/** Rows per fill statement: each commits on its own, so WAL is recycled as it goes. */
const FILL_CHUNK = 250_000;
const PURGE_BATCH = Number(process.env.BENCH_PURGE_BATCH ?? 1000);
const WITHOUT_MS = Number(process.env.BENCH_WITHOUT_MS ?? 30_000);

const run = randomBytes(3).toString('hex');
const APP_NAME = `onceflow_bench_grow_${run}`;
const schemas = {
  empty: `onceflow_bench_grow_${run}_empty`,
  full: `onceflow_bench_grow_${run}_full`,
};

/**
 * Fills rows [from, to) of `total`: row i was received at `start + i * SPAN_MS / total`, in
 * arrival order (the heap's order in life), with a random-looking id (the primary key's order is
 * not). Dead letters keep their envelope and `dead_lettered_at = updated_at`, as the table's
 * check requires.
 */
const fillSql = (table: string) => `
  INSERT INTO ${table} (source, id, state, payload_hash, envelope, received_at, claimed_at,
    lease_token, lease_expires_at, enqueued_at, processed_at, type, ordering_key, trace_id,
    reason, last_error, dead_lettered_at, attempts, consumer, updated_at, history)
  SELECT 'stripe', g.id, g.state, g.h || g.h,
    replace($1::text, 'evt_ID', g.id), g.at, g.at,
    CASE WHEN g.state = 'received' THEN g.h END,
    CASE WHEN g.state = 'received' THEN now() + interval '30 seconds' END,
    CASE WHEN g.state <> 'received' THEN g.at + interval '5 ms' END,
    CASE WHEN g.state = 'completed' THEN g.at + interval '60 ms' END,
    'charge.succeeded', 'cus_' || (g.i % 1000), g.h,
    CASE WHEN g.state = 'dead-lettered' THEN 'max-attempts' END,
    CASE WHEN g.state = 'dead-lettered'
      THEN '{"code":"HANDLER_ERROR","name":"Error","message":"upstream 503"}'::jsonb END,
    CASE WHEN g.state = 'dead-lettered' THEN g.at + interval '60 ms' END,
    CASE WHEN g.state IN ('completed', 'dead-lettered') THEN 1 ELSE 0 END,
    CASE WHEN g.state IN ('completed', 'dead-lettered') THEN 'worker-1' END,
    CASE WHEN g.state IN ('completed', 'dead-lettered') THEN g.at + interval '60 ms'
      ELSE g.at END,
    CASE g.state WHEN 'received' THEN $2::jsonb -> 0 WHEN 'enqueued' THEN $2::jsonb -> 1
      ELSE $2::jsonb -> 2 END
  FROM (SELECT *, md5(id) AS h FROM (
    SELECT i, 'evt_' || substr(md5(i::text || $5), 1, 24) AS id,
      $3::timestamptz + (i * ($6::float8 / $4::float8)) * interval '1 millisecond' AS at,
      CASE WHEN i >= $4 - 100 THEN 'received'
           WHEN i % 10000 = 7 THEN 'dead-lettered'
           WHEN i % 50000 = 13 THEN 'enqueued'
           ELSE 'completed' END AS state
    FROM generate_series($7::bigint, $8::bigint - 1) AS i) AS n) AS g`;

interface IndexDef {
  readonly name: string;
  readonly def: string;
  readonly conname: string | null;
  readonly condef: string | null;
}

/**
 * Drops the table's indexes (the primary key's constraint with its index) and returns how to
 * make them again, from the catalog: so the fill inserts into the heap only and each index is then
 * built by one sort, as `migrate()` defined it.
 */
async function dropIndexes(admin: pg.Pool, table: string, schema: string): Promise<IndexDef[]> {
  const res = await admin.query<IndexDef>(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def, c.conname,
       pg_get_constraintdef(c.oid) AS condef
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
     LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid
     WHERE x.indrelid = $1::regclass`,
    [table],
  );
  for (const d of res.rows) {
    await admin.query(
      d.conname
        ? `ALTER TABLE ${table} DROP CONSTRAINT "${d.conname}"`
        : `DROP INDEX "${schema}"."${d.name}"`,
    );
  }
  return res.rows;
}

/** Builds the indexes again, two at a time (the primary key first), with room to sort in memory. */
async function buildIndexes(admin: pg.Pool, table: string, defs: IndexDef[]): Promise<void> {
  const queue = [...defs].sort((a, b) => Number(b.conname !== null) - Number(a.conname !== null));
  await Promise.all(
    [0, 1].map(async () => {
      const conn = await admin.connect();
      try {
        await conn.query(`SET maintenance_work_mem = '512MB'`);
        for (let d = queue.shift(); d; d = queue.shift()) {
          await conn.query(
            d.conname ? `ALTER TABLE ${table} ADD CONSTRAINT "${d.conname}" ${d.condef}` : d.def,
          );
        }
      } finally {
        conn.release();
      }
    }),
  );
}

async function fill(admin: pg.Pool, table: string, start: Date): Promise<void> {
  const template = envelopeTemplate(PAYLOAD_BYTES);
  const { received, enqueued, completed } = retainedHistories();
  const histories = `[${received},${enqueued},${completed}]`;
  const sql = fillSql(table);
  const chunks: [number, number][] = [];
  for (let from = 0; from < ROWS; from += FILL_CHUNK)
    chunks.push([from, Math.min(ROWS, from + FILL_CHUNK)]);
  // Two connections, one per core; each chunk is its own transaction.
  await Promise.all(
    [0, 1].map(async () => {
      for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
        await admin.query(sql, [template, histories, start, ROWS, run, SPAN_MS, ...chunk]);
      }
    }),
  );
}

/** The receiver's path for one fresh event. */
async function webhook(store: PostgresInbox): Promise<void> {
  const env = freshEvent(PAYLOAD_BYTES);
  const claim = await store.claim(env, { leaseMs: LEASE_MS });
  if (claim.status !== 'new') throw new Error(`claim: ${claim.status}`);
  await store.markEnqueued(env.source, env.id, claim.token);
}

/** Closed-loop maximum: `CONCURRENCY` loops for `MAX_MS`. */
async function maxRate(store: PostgresInbox): Promise<number> {
  let done = 0;
  const until = performance.now() + MAX_MS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await webhook(store);
        done++;
      }
    }),
  );
  return (done / (performance.now() - t0)) * 1000;
}

const paced = (store: PostgresInbox, rate: number, signal?: AbortSignal, durationMs = PACED_MS) =>
  runPacedCalls({ rate, durationMs, maxInFlight: 256, signal, call: () => webhook(store) });

async function tableBytes(admin: pg.Pool, table: string): Promise<string> {
  const res = await admin.query<{ heap: string; idx: string }>(
    `SELECT pg_size_pretty(pg_table_size($1::regclass)) AS heap,
            pg_size_pretty(pg_indexes_size($1::regclass)) AS idx`,
    [table],
  );
  return `table ${res.rows[0]?.heap}, indexes ${res.rows[0]?.idx}`;
}

/** The plan and buffers of one purge batch on the full table, in a transaction rolled back. */
async function explainPurge(admin: pg.Pool, olderThan: Date): Promise<string> {
  const { purgeBatch } = inboxStatements(inboxNames(schemas.full, DEFAULT_TABLE));
  const conn = await admin.connect();
  try {
    await conn.query('BEGIN');
    const res = await conn.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${purgeBatch.text}`,
      [olderThan, PURGE_BATCH],
    );
    return res.rows.map((r) => `  ${r['QUERY PLAN']}`).join('\n');
  } finally {
    await conn.query('ROLLBACK');
    conn.release();
  }
}

/** Samples `pg_locks` until `signal` aborts: how often some backend waited on a lock. */
async function sampleLockWaits(admin: pg.Pool, signal: AbortSignal) {
  let samples = 0;
  let waiting = 0;
  while (!signal.aborted) {
    const res = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid)
       WHERE NOT l.granted AND a.application_name = $1`,
      [APP_NAME],
    );
    samples++;
    if ((res.rows[0]?.n ?? 0) > 0) waiting++;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { samples, waiting };
}

interface PurgeResult {
  readonly pauseRatio: number;
  readonly purged: number;
  readonly seconds: number;
  /** Claim p99 (ms) in the round just before the purge, and during it. */
  readonly without: number;
  readonly during: number;
}

/**
 * A paced round on the full table, then the purge of everything before `olderThan` at
 * `pauseRatio` while the same paced claims go on, then a round after it.
 */
async function purgeDay(
  admin: pg.Pool,
  pool: pg.Pool,
  store: PostgresInbox,
  rate: number,
  olderThan: Date,
  pauseRatio: number,
): Promise<PurgeResult> {
  const label = `pause ratio ${pauseRatio}`;
  const purger = createPostgresInbox({
    pool,
    schema: schemas.full,
    purgeBatchSize: PURGE_BATCH,
    purgePauseRatio: pauseRatio,
  });
  const before = await paced(store, rate, undefined, WITHOUT_MS);
  console.log(pacedLine(`before purge, ${label}`, before));
  const stop = new AbortController();
  const during = paced(store, rate, stop.signal, 30 * 60_000);
  const waits = sampleLockWaits(admin, stop.signal);
  const t0 = performance.now();
  const purged = await purger.purge({ olderThan });
  const seconds = (performance.now() - t0) / 1000;
  stop.abort();
  const underPurge = await during;
  const waited = await waits;
  console.log(pacedLine(`during purge, ${label}`, underPurge));
  console.log(
    `lock waits sampled every 100 ms during the purge: ${waited.waiting} of ${waited.samples} samples saw a backend waiting on a lock`,
  );
  console.log(pacedLine(`after purge, ${label}`, await paced(store, rate)));
  console.log(
    `purge at ${label} removed ${purged.toLocaleString('en')} rows in ${seconds.toFixed(1)} s (${Math.round(purged / seconds).toLocaleString('en')} rows/s, batches of ${PURGE_BATCH}): ${await tableBytes(admin, store.table)}`,
  );
  return { pauseRatio, purged, seconds, without: before.p99Ms, during: underPurge.p99Ms };
}

async function main(): Promise<void> {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
  const pool = new pg.Pool({
    connectionString: PG_URL,
    max: POOL_MAX,
    idleTimeoutMillis: 0,
    application_name: APP_NAME,
  });
  try {
    const stores = {
      empty: createPostgresInbox({ pool, schema: schemas.empty }),
      full: createPostgresInbox({ pool, schema: schemas.full }),
    };
    for (const schema of Object.values(schemas)) await migrate(admin, { schema });
    const start = new Date(Date.now() - SPAN_MS - 60_000);
    let t0 = performance.now();
    const indexes = await dropIndexes(admin, stores.full.table, schemas.full);
    await fill(admin, stores.full.table, start);
    const filled = (performance.now() - t0) / 1000;
    t0 = performance.now();
    await buildIndexes(admin, stores.full.table, indexes);
    const built = (performance.now() - t0) / 1000;
    t0 = performance.now();
    await admin.query(`ANALYZE ${stores.full.table}`);
    await admin.query(`ANALYZE ${stores.empty.table}`);
    const analysed = (performance.now() - t0) / 1000;
    // A background vacuum of the freshly filled table would land in some rounds and not others.
    await admin.query(`ALTER TABLE ${stores.full.table} SET (autovacuum_enabled = false)`);
    console.log(
      `filled ${ROWS.toLocaleString('en')} rows in ${filled.toFixed(0)} s, ${indexes.length} indexes in ${built.toFixed(0)} s, ANALYZE ${analysed.toFixed(0)} s: ${await tableBytes(admin, stores.full.table)}`,
    );

    // Warm both (connections, prepared statements), then find what the pool can do.
    await Promise.all(Array.from({ length: 200 }, () => webhook(stores.full)));
    await Promise.all(Array.from({ length: 200 }, () => webhook(stores.empty)));
    const max = await maxRate(stores.empty);
    const rate = Math.round(max / 2);
    console.log(
      `closed-loop maximum on the empty table: ${Math.round(max)}/s (${CONCURRENCY} in flight, pool of ${POOL_MAX}); paced at ${rate}/s`,
    );

    const p99 = { empty: [] as number[], full: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const side of ['empty', 'full'] as const) {
        const r = await paced(stores[side], rate);
        p99[side].push(r.p99Ms);
        console.log(pacedLine(`round ${round} ${side}`, r));
      }
    }

    console.log(
      `one purge batch (${PURGE_BATCH} rows), rolled back:\n${await explainPurge(admin, new Date(start.getTime() + DAY_MS))}`,
    );
    const purges: PurgeResult[] = [];
    for (const [day, pauseRatio] of PURGE_RATIOS.entries()) {
      if (day > 0) {
        t0 = performance.now();
        await admin.query(`VACUUM ${stores.full.table}`);
        console.log(
          `VACUUM after the purge before: ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        );
      }
      const olderThan = new Date(start.getTime() + (day + 1) * DAY_MS);
      purges.push(await purgeDay(admin, pool, stores.full, rate, olderThan, pauseRatio));
    }

    const rows = countLabel(ROWS);
    printCosts(
      `PostgreSQL inbox at ${rows} rows, claim + markEnqueued paced at ${rate}/s (half the empty table's maximum), median of ${ROUNDS} rounds, load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
      [
        {
          name: `claim p99, ${rows} rows vs empty`,
          value: median(p99.full),
          baseline: median(p99.empty),
          unit: 'ms',
          aim: 1.5,
        },
        ...purges.flatMap((r) => [
          {
            name: `claim p99 during purge of a day, pause ratio ${r.pauseRatio}, vs without`,
            value: r.during,
            baseline: r.without,
            unit: 'ms',
            aim: 2,
          },
          {
            name: `purge of a day, pause ratio ${r.pauseRatio} (${r.purged.toLocaleString('en')} rows)`,
            value: r.seconds,
            unit: 's',
          },
        ]),
      ],
    );
  } finally {
    for (const schema of Object.values(schemas)) {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
    await Promise.all([admin.end(), pool.end()]);
  }
}

await main();
