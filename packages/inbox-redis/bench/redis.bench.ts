/**
 * The receiver's inbox path on Redis beside the raw client doing the least dedupe there is, same
 * server, same client, one run:
 *
 *   onceflow  claim (Lua: SET NX PX lease + row with the envelope + two index entries) then
 *             markEnqueued (Lua), per event: what every accepted webhook costs the inbox
 *   raw       SET <id> 1 NX PX 30000 per event (one command, nothing kept beyond the key), and
 *             SET NX PX + SET XX (two round trips, like claim + markEnqueued)
 *   duplicate a repeated claim of an enqueued event beside a repeated SET NX PX (both answer "seen")
 *   record    the worker's path: begin then complete (two scripts writing the record, its history
 *             and state indexes) beside SET NX PX + SET XX, per delivery of an event that
 *             reached the worker first (begin creates its record)
 *
 * `CONCURRENCY` requests in flight at once on one ioredis connection (pipelined), interleaved
 * rounds, the median printed. Then the memory a retained event costs: `MEMORY_EVENTS` events
 * taken through claim, markEnqueued, begin and complete under a prefix of their own, every key
 * of that prefix summed with `MEMORY USAGE` (so other clients of the server do not count).
 * Prints; never fails on a time. Keys go under a random prefix and are deleted at the end.
 *
 * Where the time goes (INFO commandstats on the server, one event at a time): each script runs
 * 45–75 µs inside Redis against 3.6 µs for a bare SET, because it makes 7–9 `redis.call`s (row
 * hash, state index move, TTL, lease, history entry). The raw twin keeps no record, no index
 * and no history, so it is bounded by the client; ours by the server's script time. Env: ONCEFLOW_REDIS_URL, BENCH_EVENTS (per round, default 5000),
 * BENCH_ROUNDS (default 3), BENCH_CONCURRENCY (default 64).
 */
import { randomBytes } from 'node:crypto';
import {
  benchEnvelopes,
  interleaved,
  type Measured,
  measure,
  printComparisons,
} from '@onceflow/conformance/bench';
import type { Envelope } from '@onceflow/core';
import { Redis } from 'ioredis';
import { createRedisInbox } from '../src/index.js';

const REDIS_URL = process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const LEASE_MS = 30_000;
const MEMORY_EVENTS = Number(process.env.BENCH_MEMORY_EVENTS ?? 10_000);

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const prefix = `onceflow-bench:${randomBytes(6).toString('hex')}`;
const inbox = createRedisInbox({ redis, prefix });
const rawBase = `{${prefix}}:raw:`;
const memoryPrefix = `${prefix}-memory`;

/** Runs `each` over `items` with `CONCURRENCY` calls in flight. */
async function pooled<T>(items: readonly T[], each: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++] as T);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

async function claimAndMark(env: Envelope): Promise<void> {
  const claim = await inbox.claim(env, { leaseMs: LEASE_MS });
  if (claim.status !== 'new') throw new Error(`claim of ${env.id}: ${claim.status}`);
  await inbox.markEnqueued(env.source, env.id, claim.token);
}

async function beginAndComplete(env: Envelope): Promise<void> {
  const begun = await inbox.begin(env, { leaseMs: LEASE_MS, attempt: 1, consumer: 'bench' });
  if (begun.status !== 'acquired') throw new Error(`begin of ${env.id}: ${begun.status}`);
  await inbox.complete(env.source, env.id, begun.token);
}

const setNx = (env: Envelope) => redis.set(`${rawBase}${env.id}`, '1', 'PX', LEASE_MS, 'NX');

async function setNxThenMark(env: Envelope): Promise<void> {
  if ((await setNx(env)) !== 'OK') throw new Error(`raw claim of ${env.id} lost`);
  await redis.set(`${rawBase}${env.id}`, 'enqueued', 'PX', LEASE_MS, 'XX');
}

/** A fresh batch per round for the writes (each id claimed once), kept for the duplicate rows. */
const round =
  (label: string, run: (batch: Envelope[]) => Promise<void>, batch?: Envelope[]) => () =>
    measure(label, EVENTS, async () => run(batch ?? benchEnvelopes(EVENTS)));

async function main(): Promise<void> {
  await redis.ping();
  const seen = benchEnvelopes(EVENTS);
  await pooled(seen, claimAndMark);
  await pooled(seen, setNx);
  const [ours, rawOne, rawTwo, dupOurs, dupRaw, record, recordRaw] = (await interleaved(ROUNDS, [
    round('claim + markEnqueued', (b) => pooled(b, claimAndMark)),
    round('SET NX PX', (b) => pooled(b, setNx)),
    round('SET NX PX + SET XX', (b) => pooled(b, setNxThenMark)),
    round(
      'claim (duplicate)',
      (b) => pooled(b, (e) => inbox.claim(e, { leaseMs: LEASE_MS })),
      seen,
    ),
    round('SET NX PX (exists)', (b) => pooled(b, setNx), seen),
    round('begin + complete', (b) => pooled(b, beginAndComplete)),
    round('SET NX PX + SET XX (worker)', (b) => pooled(b, setNxThenMark)),
  ])) as [Measured, Measured, Measured, Measured, Measured, Measured, Measured];
  printComparisons(
    `Redis inbox, ${EVENTS} events per round, ${CONCURRENCY} in flight, median of ${ROUNDS} rounds`,
    [
      { name: 'new event vs SET NX PX', ours, raw: rawOne, aim: 0.33 },
      { name: 'new event vs SET NX PX + SET XX', ours, raw: rawTwo, aim: 0.8 },
      { name: 'duplicate vs SET NX PX', ours: dupOurs, raw: dupRaw, aim: 0.5 },
      {
        name: 'delivery (begin + complete) vs SET NX PX + SET XX',
        ours: record,
        raw: recordRaw,
        aim: 0.8,
      },
    ],
  );
  const stats = await inbox.stats();
  console.log(`\ninbox after the run: ${JSON.stringify(stats)}`);
  await memoryPerEvent();
}

/** Sums `MEMORY USAGE` of every key under `{<base>}:`. */
async function bytesUnder(base: string): Promise<{ bytes: number; keys: number }> {
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `{${base}}:*`, 'COUNT', 1000);
    cursor = next;
    const sizes = await Promise.all(found.map((key) => redis.memory('USAGE', key, 'SAMPLES', 0)));
    for (const size of sizes) bytes += Number(size ?? 0);
    keys += found.length;
  } while (cursor !== '0');
  return { bytes, keys };
}

/** Bytes per pending claim (envelope kept) and per completed event (record kept for retention). */
async function memoryPerEvent(): Promise<void> {
  const store = createRedisInbox({ redis, prefix: memoryPrefix });
  const events = benchEnvelopes(MEMORY_EVENTS);
  const tokens = new Map<string, string>();
  await pooled(events, async (env) => {
    const claim = await store.claim(env, { leaseMs: LEASE_MS });
    if (claim.status === 'new') tokens.set(env.id, claim.token);
  });
  const pending = await bytesUnder(memoryPrefix);
  await pooled(events, async (env) => {
    await store.markEnqueued(env.source, env.id, tokens.get(env.id) ?? '');
    const begun = await store.begin(env, { leaseMs: LEASE_MS, attempt: 1, consumer: 'bench' });
    if (begun.status === 'acquired') await store.complete(env.source, env.id, begun.token);
  });
  const completed = await bytesUnder(memoryPrefix);
  const size = Buffer.byteLength(JSON.stringify(events[0]?.payload ?? null));
  const per = (m: { bytes: number }) => `${Math.round(m.bytes / MEMORY_EVENTS)} B`;
  console.log(
    `\nRedis memory per event (${MEMORY_EVENTS} events, payload ${size} B, MEMORY USAGE summed):`,
  );
  console.log(
    `  pending claim (row, envelope, lease, indexes): ${per(pending)} (${pending.keys} keys)`,
  );
  console.log(
    `  completed, kept for retention (row with history, indexes): ${per(completed)} (${completed.keys} keys)`,
  );
}

async function cleanup(): Promise<void> {
  for (const base of [prefix, memoryPrefix]) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `{${base}}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  }
  await redis.quit();
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(cleanup);
