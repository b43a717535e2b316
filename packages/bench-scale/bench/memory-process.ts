/**
 * One memory scenario, alone in its process (run with --expose-gc): `memory-process.ts <scenario>`.
 * Each scenario warms up (the code paths run, pools and channels open), takes a baseline after
 * `global.gc()`, then puts BENCH_HELD events (default 10k) in the state it measures and takes a
 * second reading after `global.gc()`, while they are still held. Sends `{ heap, external, rss,
 * held }` deltas over IPC.
 *
 * - store: the memory store retaining completed records (`begin` + `complete` each)
 * - receiver-memory / receiver-postgres: events accepted by `createReceiver` (Stripe verifier,
 *   `receiver.fetch`), inbox on the memory store / PostgreSQL, a transport that keeps nothing
 * - receiver-memory-in-flight / receiver-postgres-in-flight: requests in flight, held in the
 *   transport's `publish` (claimed, not yet enqueued)
 * - worker-memory / worker-rabbitmq / worker-embedded: deliveries in flight in `createWorker`
 *   (concurrency ≥ held, the guard's record begun, a handler that waits), on the memory
 *   transport + memory store, RabbitMQ + PostgreSQL, the embedded file
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEnvelopes, publishAll, BENCH_EVENT_TYPE } from '@onceflow/conformance/bench';
import {
  type Envelope,
  type Inbox,
  type RecordStore,
  type Transport,
  createReceiver,
  createWorker,
  defineHandler,
  stripe,
} from '@onceflow/core';
import { createMemoryStore, createMemoryTransport } from '@onceflow/core/testing';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '@onceflow/adapter-rabbitmq';
import { createEmbedded } from '@onceflow/embedded';
import { createPostgresInbox, migrate } from '@onceflow/inbox-postgres';
import pg from 'pg';
import { PG_URL } from './lanes.js';

export interface MemoryReading {
  readonly heap: number;
  readonly external: number;
  readonly rss: number;
  readonly held: number;
}

const HELD = Number(process.env.BENCH_HELD ?? 10_000);
const WARM = 500;
const SECRET = 'whsec_bench_memory';
const scenario = process.argv[2] ?? '';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

async function snapshot() {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external, rss: m.rss };
}

const cleanups: (() => Promise<unknown>)[] = [];
const run = randomBytes(3).toString('hex');

async function pgSchema(): Promise<{ pool: pg.Pool; schema: string }> {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 8 });
  const schema = `onceflow_memory_${run}`;
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await migrate(pool, { schema });
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });
  return { pool, schema };
}

/** Envelopes without an ordering key, so no transport holds any back behind an earlier one. */
const unkeyed = (count: number): Envelope[] =>
  benchEnvelopes(count).map(({ key: _key, ...e }) => e as Envelope);

/** The memory store retaining `HELD` completed records. */
async function store(): Promise<MemoryReading> {
  const records = createMemoryStore();
  const lease = { leaseMs: 30_000, attempt: 1, consumer: 'bench', redrive: undefined };
  const completeAll = async (envelopes: readonly Envelope[]) => {
    for (const e of envelopes) {
      const begun = await records.begin(e, lease);
      if (begun.status === 'acquired') await records.complete(e.source, e.id, begun.token);
    }
  };
  await completeAll(unkeyed(WARM));
  const before = await snapshot();
  let envelopes: Envelope[] | undefined = unkeyed(HELD);
  await completeAll(envelopes);
  envelopes = undefined; // only the store keeps them
  return delta(before, await snapshot());
}

/** A signed Stripe-style request of ~700 B. */
function stripeRequest(i: number): Request {
  const body = JSON.stringify({
    id: `evt_${run}_${i}`,
    type: 'invoice.paid',
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: `in_${i}`, customer: `cus_${i % 64}`, filler: 'x'.repeat(560) } },
  });
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
  return new Request('http://bench/webhooks/stripe', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${v1}` },
    body,
  });
}

/** Events accepted by the receiver (held: false) or requests held in `publish` (held: true). */
async function receiver(inboxKind: 'memory' | 'postgres', held: boolean): Promise<MemoryReading> {
  let gate: (() => void) | undefined;
  let gated = false;
  const waiting: Promise<void> = new Promise((r) => {
    gate = r;
  });
  let entered = 0;
  let allEntered!: () => void;
  const everyone = new Promise<void>((r) => {
    allEntered = r;
  });
  const transport = {
    publish: async () => {
      if (!gated) return;
      if (++entered === HELD) allEntered();
      await waiting;
    },
  };
  const inbox: Inbox =
    inboxKind === 'memory' ? createMemoryStore() : createPostgresInbox({ ...(await pgSchema()) });
  const r = createReceiver({
    sources: { stripe: stripe({ secrets: [SECRET] }) },
    inbox,
    transport,
    maxConcurrentBodies: 2 * HELD, // its default (256) answers the held requests 503 overloaded
  });
  const accept = async (from: number, count: number) => {
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) => r.fetch(stripeRequest(from + i), 'stripe')),
    );
    for (const a of answers) if (a.status !== 202) throw new Error(`receiver answered ${a.status}`);
  };
  // Warm up in slices (as a sender would send), then measure.
  for (let i = 0; i < WARM; i += 100) await accept(i, 100);
  const before = await snapshot();
  if (!held) {
    for (let i = WARM; i < WARM + HELD; i += 100) await accept(i, 100);
    return delta(before, await snapshot());
  }
  gated = true;
  const answered = accept(WARM, HELD);
  await everyone;
  const reading = delta(before, await snapshot());
  gate?.();
  await answered;
  return reading;
}

/** Deliveries in flight in a worker whose handler waits until released. */
async function worker(kind: 'memory' | 'rabbitmq' | 'embedded'): Promise<MemoryReading> {
  let side: { transport: Transport; publisher: Transport; records: RecordStore };
  if (kind === 'memory') {
    const transport = createMemoryTransport();
    side = { transport, publisher: transport, records: createMemoryStore() };
  } else if (kind === 'rabbitmq') {
    const queue = `onceflow-memory-${run}`;
    const transport = createRabbitMqTransport({ queue });
    const publisher = createRabbitMqTransport({ queue, publishTimeoutMs: 60_000 });
    const records = createPostgresInbox({ ...(await pgSchema()) });
    cleanups.push(async () => {
      await publisher.close();
      await transport.close();
      await deleteRabbitMqQueues({ queue });
    });
    side = { transport, publisher, records };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'onceflow-memory-'));
    const embedded = createEmbedded({ path: join(dir, 'bench.db'), synchronous: 'normal' });
    await embedded.start();
    const transport = embedded.transport('bench');
    cleanups.push(async () => {
      await transport.close();
      await embedded.close();
      rmSync(dir, { recursive: true, force: true });
    });
    side = { transport, publisher: transport, records: embedded.records };
  }
  let gated = false;
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let handled = 0;
  let entered = 0;
  const waiters: (() => void)[] = [];
  const reach = (counter: () => number, n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (counter() >= n ? resolve() : waiters.push(check));
      check();
    });
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const w = createWorker({
    transport: side.transport,
    records: side.records,
    concurrency: HELD + WARM,
    handlers: [
      defineHandler({
        type: BENCH_EVENT_TYPE,
        handle: async () => {
          if (gated) {
            entered++;
            wake();
            await released;
          }
          handled++;
          wake();
        },
      }),
    ],
  });
  await w.start();
  await publishAll(side.publisher, unkeyed(WARM), 100, 4);
  await reach(() => handled, WARM);
  const before = await snapshot();
  gated = true;
  await publishAll(side.publisher, unkeyed(HELD), 100, 4);
  await reach(() => entered, HELD);
  const reading = delta(before, await snapshot());
  release();
  await reach(() => handled, WARM + HELD);
  await w.close();
  return reading;
}

function delta(
  before: Awaited<ReturnType<typeof snapshot>>,
  after: Awaited<ReturnType<typeof snapshot>>,
): MemoryReading {
  return {
    heap: after.heap - before.heap,
    external: after.external - before.external,
    rss: after.rss - before.rss,
    held: HELD,
  };
}

const scenarios: Record<string, () => Promise<MemoryReading>> = {
  store,
  'receiver-memory': () => receiver('memory', false),
  'receiver-postgres': () => receiver('postgres', false),
  'receiver-memory-in-flight': () => receiver('memory', true),
  'receiver-postgres-in-flight': () => receiver('postgres', true),
  'worker-memory': () => worker('memory'),
  'worker-rabbitmq': () => worker('rabbitmq'),
  'worker-embedded': () => worker('embedded'),
};

const measureScenario = scenarios[scenario];
if (!measureScenario) throw new Error(`unknown scenario ${scenario}`);
try {
  process.send?.(await measureScenario());
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
}
process.exit(0);
