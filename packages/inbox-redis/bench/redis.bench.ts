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
 * rounds, the median printed. Then the memory a retained event costs, with a 2 KB payload and a
 * near-empty one: `MEMORY_EVENTS` events taken through claim, markEnqueued, begin and complete
 * under a prefix of their own, every key of that prefix summed with `MEMORY USAGE` (other clients
 * of the server do not count), beside the server's `used_memory` delta over the same work (INFO
 * memory: allocator overhead included, and whatever other clients wrote meanwhile).
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
import { printCosts } from '../../core/bench/cost-rows.js';
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
/** Every prefix the memory measurement wrote under, for cleanup. */
const memoryBases: string[] = [];

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
  await memoryPerRetainedEvent();
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

/** The server's `used_memory` (INFO memory): every key on the server counts, ours among them. */
async function usedMemory(): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

interface EventMemory {
  readonly pending: { bytes: number; keys: number };
  readonly completed: { bytes: number; keys: number };
  /** `used_memory` after minus before, for the `MEMORY_EVENTS` completed events. */
  readonly usedMemoryDelta: number;
}

/**
 * Bytes per pending claim (envelope kept) and per completed event (record kept for retention),
 * for events of about `payloadBytes` of payload, under a prefix of their own (deleted after).
 */
async function memoryPerEvent(payloadBytes: number): Promise<EventMemory> {
  const base = `${memoryPrefix}-${payloadBytes}`;
  memoryBases.push(base);
  const store = createRedisInbox({ redis, prefix: base });
  const events = benchEnvelopes(MEMORY_EVENTS, payloadBytes);
  const tokens = new Map<string, string>();
  const before = await usedMemory();
  await pooled(events, async (env) => {
    const claim = await store.claim(env, { leaseMs: LEASE_MS });
    if (claim.status === 'new') tokens.set(env.id, claim.token);
  });
  const pending = await bytesUnder(base);
  await pooled(events, async (env) => {
    await store.markEnqueued(env.source, env.id, tokens.get(env.id) ?? '');
    const begun = await store.begin(env, { leaseMs: LEASE_MS, attempt: 1, consumer: 'bench' });
    if (begun.status === 'acquired') await store.complete(env.source, env.id, begun.token);
  });
  const usedMemoryDelta = (await usedMemory()) - before;
  return { pending, completed: await bytesUnder(base), usedMemoryDelta };
}

/** Memory per retained event with a 2 KB payload and with a near-empty one, printed as cost rows. */
async function memoryPerRetainedEvent(): Promise<void> {
  const sizes = [2048, 0];
  const measured: [number, EventMemory][] = [];
  for (const size of sizes) measured.push([size, await memoryPerEvent(size)]);
  const per = (bytes: number) => Math.round(bytes / MEMORY_EVENTS);
  console.log(`\nRedis memory per event (${MEMORY_EVENTS} events under a prefix of their own):`);
  for (const [size, m] of measured) {
    console.log(
      `  payload ${size} B: pending claim ${per(m.pending.bytes)} B (${m.pending.keys} keys), completed ${per(m.completed.bytes)} B (${m.completed.keys} keys) by MEMORY USAGE summed; used_memory delta ${per(m.usedMemoryDelta)} B`,
    );
  }
  const perTen = (bytes: number) => (bytes / MEMORY_EVENTS) * 10_000;
  printCosts(
    `Redis memory per 10k completed events kept for retention (${MEMORY_EVENTS} measured; used_memory counts every client of the server)`,
    measured.flatMap(([size, m]) => [
      {
        name: `used_memory delta, payload ${size === 0 ? '~30' : size} B`,
        value: perTen(m.usedMemoryDelta),
        unit: 'B',
      },
      {
        name: `MEMORY USAGE summed, payload ${size === 0 ? '~30' : size} B`,
        value: perTen(m.completed.bytes),
        unit: 'B',
      },
    ]),
  );
}

async function cleanup(): Promise<void> {
  for (const base of [prefix, ...memoryBases]) {
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
