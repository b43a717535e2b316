/**
 * The embedded SQLite inbox as it grows: the receiver's path on a file holding four days of
 * events beside an empty one, and retention of a day while claims go on. One process, one run.
 *
 *   claim      the receiver's path through the store: claim then markEnqueued of a fresh event
 *              (random id), at a paced rate: half the sequential maximum on the empty file.
 *              Latency runs from each call's due time (open loop), so a stall is charged to
 *              every call queued behind it. The default `synchronous: 'full'` (a sync per commit).
 *   empty      a file made by `start()`, nothing in it
 *   full       the same with BENCH_ROWS rows (default 1M) received over the four days before
 *              now, filled in SQL in one transaction: almost all completed, one in 10,000
 *              dead-lettered, one in 50,000 still enqueued, the last 100 received; then ANALYZE
 *   purge      the oldest day (a quarter of the rows) purged in slices, one per entry of
 *              BENCH_PURGES, while the paced claims go on; each slice through a fresh instance on
 *              the full file with that entry's `purgeBatchSize` and `purgePauseRatio`, either in
 *              the claiming process (on the claims' connection and event loop) or, marked
 *              `process`, by a second process on the same file. Each slice prints its batch size,
 *              pause ratio, rows/s, the event loop's longest stall, and claim p99 during it beside
 *              a round without a purge run just before it.
 *
 * Rounds alternate empty and full (median p99 kept). The aims: claim p99 on the full file within
 * 1.5× of the empty one; during the purge within 2× of without. Prints; never fails on a time.
 * Files in a temporary folder, deleted at the end. Env: BENCH_ROWS (default 1000000),
 * BENCH_PAYLOAD_BYTES (default 300), BENCH_PACED_MS (per round, default 5000), BENCH_ROUNDS
 * (default 3), BENCH_PURGES (comma-separated `batchSize:pauseRatio[:process]`, default
 * `500:0,100:1,100:1:process`; a fourth field sets `wal_autocheckpoint` pages on the claiming
 * connection for that slice, SQLite's default 1000, e.g. `100:1:here:0` for none).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
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
import { createEmbedded, type Embedded } from '../src/index.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const PAYLOAD_BYTES = Number(process.env.BENCH_PAYLOAD_BYTES ?? 300);
const PACED_MS = Number(process.env.BENCH_PACED_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PURGES = (process.env.BENCH_PURGES ?? '500:0,100:1,100:1:process').split(',').map((spec) => {
  const [batch, ratio, where, autocheckpoint] = spec.split(':');
  return {
    purgeBatchSize: Number(batch),
    purgePauseRatio: Number(ratio),
    inProcess: where !== 'process',
    /** `wal_autocheckpoint` pages on the purging connection; SQLite's default 1000. */
    autocheckpoint: autocheckpoint ? Number(autocheckpoint) : undefined,
  };
});
type PurgeSpec = (typeof PURGES)[number];
const MAX_MS = 3000;
const LEASE_MS = 30_000;

/**
 * Rows [0, total) in id order (the table is clustered on its key), row i received at
 * `start + i * SPAN_MS / total`, with a random-looking id (a multiplicative hash of i, so each
 * row's columns agree on it: SQLite may evaluate a subquery's column once per use).
 */
const FILL_SQL = `
  INSERT INTO onceflow_inbox (source, id, state, claim_token, claim_expires_at, claimed_at,
    payload_hash, received_at, updated_at, attempts, type, ordering_key, consumer, trace_id,
    reason, last_error, history, envelope)
  SELECT 'stripe', id, state,
    CASE WHEN state = 'received' THEN h END,
    CASE WHEN state = 'received' THEN @now + 30000 END,
    at, h || h, at,
    CASE WHEN state IN ('completed', 'dead-lettered') THEN at + 60 ELSE at END,
    CASE WHEN state IN ('completed', 'dead-lettered') THEN 1 ELSE 0 END,
    'charge.succeeded', 'cus_' || (i % 1000),
    CASE WHEN state IN ('completed', 'dead-lettered') THEN 'worker-1' END,
    h,
    CASE WHEN state = 'dead-lettered' THEN 'max-attempts' END,
    CASE WHEN state = 'dead-lettered'
      THEN '{"code":"HANDLER_ERROR","name":"Error","message":"upstream 503"}' END,
    CASE state WHEN 'received' THEN @received WHEN 'enqueued' THEN @enqueued ELSE @completed END,
    replace(@template, 'evt_ID', id)
  FROM (
    SELECT i, printf('evt_%08x%08x', (i * 2654435761) % 4294967296, i) AS id,
      printf('%08x%08x%08x%08x', (i * 2246822519) % 4294967296, (i * 3266489917) % 4294967296,
        (i * 668265263) % 4294967296, i) AS h,
      @start + (i * @span) / @total AS at,
      CASE WHEN i >= @total - 100 THEN 'received'
           WHEN i % 10000 = 7 THEN 'dead-lettered'
           WHEN i % 50000 = 13 THEN 'enqueued'
           ELSE 'completed' END AS state
    FROM (WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < @total)
          SELECT i FROM s))
  ORDER BY id`;

function fill(embedded: Embedded, start: number): void {
  const db = embedded.db;
  const insert = db.prepare(FILL_SQL);
  db.transaction(() =>
    insert.run({
      now: Date.now(),
      start,
      span: SPAN_MS,
      total: ROWS,
      template: envelopeTemplate(PAYLOAD_BYTES),
      ...retainedHistories(),
    }),
  ).immediate();
  db.exec('ANALYZE');
  db.pragma('wal_checkpoint(TRUNCATE)');
}

/** The receiver's path for one fresh event. */
async function webhook(embedded: Embedded): Promise<void> {
  const env = freshEvent(PAYLOAD_BYTES);
  const claim = await embedded.inbox.claim(env, { leaseMs: LEASE_MS });
  if (claim.status !== 'new') throw new Error(`claim: ${claim.status}`);
  await embedded.inbox.markEnqueued(env.source, env.id, claim.token);
}

/** Sequential maximum for `MAX_MS` (SQLite writes one at a time). */
async function maxRate(embedded: Embedded): Promise<number> {
  let done = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < MAX_MS) {
    await webhook(embedded);
    done++;
  }
  return (done / (performance.now() - t0)) * 1000;
}

const paced = (embedded: Embedded, rate: number, signal?: AbortSignal, durationMs = PACED_MS) =>
  runPacedCalls({ rate, durationMs, maxInFlight: 256, signal, call: () => webhook(embedded) });

const loadLine = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

/** `purge` by another process on the same file (this script, forked with `purge-child`). */
function purgeInChild(path: string, spec: PurgeSpec, olderThan: Date): Promise<number> {
  const args = ['purge-child', path, String(spec.purgeBatchSize), String(spec.purgePauseRatio)];
  const child = fork(fileURLToPath(import.meta.url), [...args, String(olderThan.getTime())]);
  return new Promise((resolve, reject) => {
    child.once('message', (n) => resolve(Number(n)));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`purge child exited with ${code}`)));
  });
}

async function purgeChild(): Promise<void> {
  const [path = '', batch, ratio, before] = process.argv.slice(3);
  const embedded = createEmbedded({
    path,
    purgeBatchSize: Number(batch),
    purgePauseRatio: Number(ratio),
  });
  await embedded.start();
  const purged = await embedded.inbox.purge({ olderThan: new Date(Number(before)) });
  await embedded.close();
  process.send?.(purged, () => process.exit(0));
}

const fileMb = (path: string) => `${Math.round(statSync(path).size / 2 ** 20)} MB`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-grow-'));
  const paths = { empty: join(dir, 'empty.db'), full: join(dir, 'full.db') };
  const files = {
    empty: createEmbedded({ path: paths.empty }),
    full: createEmbedded({ path: paths.full }),
  };
  try {
    await Promise.all([files.empty.start(), files.full.start()]);
    const start = Date.now() - SPAN_MS - 60_000;
    let t0 = performance.now();
    fill(files.full, start);
    console.log(
      `filled ${ROWS.toLocaleString('en')} rows and ANALYZE in ${((performance.now() - t0) / 1000).toFixed(0)} s: ${fileMb(paths.full)}`,
    );

    for (const file of Object.values(files)) for (let i = 0; i < 200; i++) await webhook(file);
    const max = await maxRate(files.empty);
    const rate = Math.round(max / 2);
    console.log(`sequential maximum on the empty file: ${Math.round(max)}/s; paced at ${rate}/s`);

    const p99 = { empty: [] as number[], full: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const side of ['empty', 'full'] as const) {
        const r = await paced(files[side], rate);
        p99[side].push(r.p99Ms);
        console.log(pacedLine(`round ${round} ${side}`, r));
      }
    }

    // The oldest day in one slice per purge entry, each purged while the claims go on.
    const slices: { spec: PurgeSpec; without: number; during: number; rows: number; s: number }[] =
      [];
    await files.full.close();
    for (const [k, spec] of PURGES.entries()) {
      const olderThan = new Date(start + ((k + 1) * DAY_MS) / PURGES.length);
      const { purgeBatchSize, purgePauseRatio } = spec;
      files.full = createEmbedded({ path: paths.full, purgeBatchSize, purgePauseRatio });
      await files.full.start();
      if (spec.autocheckpoint !== undefined) {
        files.full.db.pragma(`wal_autocheckpoint = ${spec.autocheckpoint}`);
      }
      const label = `${spec.purgeBatchSize}/${spec.purgePauseRatio}${spec.inProcess ? '' : ' 2nd proc'}${spec.autocheckpoint === undefined ? '' : ` ckpt ${spec.autocheckpoint}`}`;
      const before = await paced(files.full, rate);
      console.log(pacedLine(`without (${label})`, before));
      const stop = new AbortController();
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      const during = paced(files.full, rate, stop.signal, 30 * 60_000);
      t0 = performance.now();
      const purged = spec.inProcess
        ? await files.full.inbox.purge({ olderThan })
        : await purgeInChild(paths.full, spec, olderThan);
      const seconds = (performance.now() - t0) / 1000;
      stop.abort();
      const underPurge = await during;
      loop.disable();
      console.log(pacedLine(`during purge (${label})`, underPurge));
      console.log(
        `  purge batch ${spec.purgeBatchSize}, pause ratio ${spec.purgePauseRatio}, ${spec.inProcess ? 'in the claiming process' : 'in a second process'}: ${purged.toLocaleString('en')} rows in ${seconds.toFixed(1)} s (${Math.round(purged / seconds).toLocaleString('en')} rows/s), longest event-loop stall ${(loop.max / 1e6).toFixed(0)} ms, load ${loadLine()}`,
      );
      slices.push({
        spec,
        without: before.p99Ms,
        during: underPurge.p99Ms,
        rows: purged,
        s: seconds,
      });
      await files.full.close();
    }
    files.full = createEmbedded({ path: paths.full });
    await files.full.start();
    console.log(pacedLine('after purge', await paced(files.full, rate)));

    const rows = countLabel(ROWS);
    printCosts(
      `SQLite inbox (embedded) at ${rows} rows, claim + markEnqueued paced at ${rate}/s (half the empty file's maximum), median of ${ROUNDS} rounds, load average ${loadLine()}`,
      [
        {
          name: `claim p99, ${rows} rows vs empty`,
          value: median(p99.full),
          baseline: median(p99.empty),
          unit: 'ms',
          aim: 1.5,
        },
        ...slices.flatMap(({ spec, without, during, rows: n, s: seconds }) => {
          const how = `batch ${spec.purgeBatchSize}, pause ratio ${spec.purgePauseRatio}${spec.inProcess ? '' : ', 2nd process'}${spec.autocheckpoint === undefined ? '' : `, wal_autocheckpoint ${spec.autocheckpoint}`}`;
          return [
            {
              name: `claim p99 during purge (${how}) vs without`,
              value: during,
              baseline: without,
              unit: 'ms',
              aim: 2,
            },
            {
              name: `purge (${how}): ${n.toLocaleString('en')} rows, ${Math.round(n / seconds).toLocaleString('en')} rows/s`,
              value: seconds,
              unit: 's',
            },
          ];
        }),
      ],
    );
  } finally {
    await Promise.all([files.empty.close(), files.full.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'purge-child') await purgeChild();
else await main();
