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
 * rounds, the median printed. Prints; never fails on a time. Keys go under a random prefix and
 * are deleted at the end. Env: ONCEFLOW_REDIS_URL, BENCH_EVENTS (per round, default 5000),
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

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const prefix = `onceflow-bench:${randomBytes(6).toString('hex')}`;
const inbox = createRedisInbox({ redis, prefix });
const rawBase = `{${prefix}}:raw:`;

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
      { name: 'new event vs SET NX PX + SET XX', ours, raw: rawTwo, aim: 0.6 },
      { name: 'duplicate vs SET NX PX', ours: dupOurs, raw: dupRaw, aim: 0.5 },
      {
        name: 'delivery (begin + complete) vs SET NX PX + SET XX',
        ours: record,
        raw: recordRaw,
        aim: 0.6,
      },
    ],
  );
  const stats = await inbox.stats();
  console.log(`\ninbox after the run: ${JSON.stringify(stats)}`);
}

async function cleanup(): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
  await redis.quit();
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(cleanup);
