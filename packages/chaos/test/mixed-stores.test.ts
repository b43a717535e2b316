import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deleteBullmqQueue } from '@onceflow/adapter-bullmq';
import {
  createMetrics,
  createReceiver,
  createStoreMonitor,
  type EventState,
  type Inbox,
  type RecordStore,
  stripe,
} from '@onceflow/core';
import { createPostgresInbox, migrate } from '@onceflow/inbox-postgres';
import { Redis } from 'ioredis';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, describe, expect, it } from 'vitest';
import type { MixedSpec } from './mixed/spec.js';
import { openReceiverSide } from './mixed/stack.js';

const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';
const EVENTS = 100;
const REJECTED = [13, 47, 88];
const SECRET = 'whsec_mixed';
const signer = new Stripe('sk_test_mixed');

interface WorkerChild {
  readonly process: ChildProcess;
  readonly exited: Promise<string>;
}

/** Forks the worker process; resolves once it consumes. */
function spawnWorker(spec: MixedSpec, env: Record<string, string> = {}): Promise<WorkerChild> {
  const file = fileURLToPath(new URL('./mixed/worker-process.ts', import.meta.url));
  const child = fork(file, [], {
    execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, MIXED_SPEC: JSON.stringify(spec), ...env },
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  return new Promise((resolve, reject) => {
    child.on('message', (m: { kind?: string }) => {
      if (m.kind === 'ready') resolve({ process: child, exited });
    });
    void exited.then((how) => reject(new Error(`worker ended (${how}) before it was ready`)));
  });
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function webhook(runId: string, n: number): Request {
  const payload = JSON.stringify({
    id: `evt_${runId}_${n}`,
    object: 'event',
    type: 'mixed.effect',
    created: Math.floor(Date.now() / 1000),
    data: { object: { n } },
  });
  const signature = signer.webhooks.generateTestHeaderString({ payload, secret: SECRET });
  return new Request('http://receiver.test/webhooks/stripe', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
  });
}

async function stateCounts(records: RecordStore): Promise<Partial<Record<EventState, number>>> {
  const states: EventState[] = [
    'enqueued',
    'processing',
    'retry-scheduled',
    'completed',
    'dead-lettered',
  ];
  const counts: Partial<Record<EventState, number>> = {};
  for (const state of states) counts[state] = await records.count({ state });
  return counts;
}

async function gauge(metrics: ReturnType<typeof createMetrics>, name: string, labels = {}) {
  const metric = metrics.registry.getSingleMetric(name);
  const { values } = (await metric?.get()) ?? { values: [] };
  const found = values.find((v) =>
    Object.entries(labels).every(([k, want]) => v.labels[k] === want),
  );
  return found?.value;
}

const SHAPES = [
  ['a Redis inbox beside PostgreSQL records, over BullMQ', 'redis'],
  ['an embedded (SQLite) inbox beside PostgreSQL records, over its queue', 'embedded'],
] as const;

describe.each(SHAPES)('%s: workers SIGKILLed mid-run', (_title, shape) => {
  const runId = randomUUID().slice(0, 8);
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-mixed-'));
  const spec: MixedSpec = {
    shape,
    pgUrl: PG_URL,
    schema: `mixed_${runId}`,
    redisUrl: REDIS_URL,
    inboxPrefix: `mixed:${runId}:inbox`,
    file: join(dir, 'onceflow.db'),
    queue: `mixed-${runId}`,
    lockMs: 2_000,
    rejected: REJECTED,
  };
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  const redis = new Redis(REDIS_URL);
  const children: WorkerChild[] = [];

  afterAll(async () => {
    for (const c of children) c.process.kill('SIGKILL');
    if (shape === 'redis') {
      await deleteBullmqQueue({ url: REDIS_URL, queue: spec.queue, prefix: spec.queue });
      const keys = await redis.keys(`{${spec.inboxPrefix}}:*`);
      if (keys.length > 0) await redis.del(...keys);
    }
    await redis.quit();
    await pool.query(`DROP SCHEMA IF EXISTS "${spec.schema}" CASCADE`);
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it('both stores agree at the end: inbox enqueued 0, gauges right, retention purges what is finished', async () => {
    await migrate(pool, { schema: spec.schema });
    await pool.query(`CREATE TABLE "${spec.schema}".ledger (event_id TEXT NOT NULL)`);
    const records = createPostgresInbox({ pool, schema: spec.schema });
    const side = await openReceiverSide(spec);
    const { inbox } = side;
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: [SECRET] }) },
      inbox,
      transport: side.transport,
    });
    const ledgerRows = async () =>
      Number((await pool.query(`SELECT count(*) AS n FROM "${spec.schema}".ledger`)).rows[0].n);

    // Worker 1 dies after its 20th record write, before the inbox mark and the ack.
    const first = await spawnWorker(spec, {
      MIXED_DIE_BEFORE_MARK: '20',
      MIXED_NAME: 'worker-1',
    });
    children.push(first);
    for (let n = 1; n <= EVENTS; n++) {
      const res = await receiver.fetch(webhook(runId, n), 'stripe');
      expect(res.status, `event ${n}`).toBe(202);
    }
    expect(await first.exited).toBe('SIGKILL');

    // Worker 2 is SIGKILLed from outside once most of the work is done.
    const second = await spawnWorker(spec, { MIXED_NAME: 'worker-2' });
    children.push(second);
    await until(async () => (await ledgerRows()) >= 60, 'ledger rows from worker 2');
    second.process.kill('SIGKILL');
    await second.exited;

    const third = await spawnWorker(spec, { MIXED_NAME: 'worker-3' });
    children.push(third);
    const finished = EVENTS - REJECTED.length;
    await until(async () => {
      const c = await stateCounts(records);
      const stats = await inbox.stats();
      return (
        c.completed === finished &&
        c['dead-lettered'] === REJECTED.length &&
        stats.enqueued === 0 &&
        stats.pending === 0
      );
    }, 'every event finished in the record and marked in the inbox');
    third.process.send({ kind: 'stop' });
    await third.exited;

    // The record: every event once in the ledger (lost 0, doubled 0), the refused ones dead letters.
    const { rows } = await pool.query<{ event_id: string; n: string }>(
      `SELECT event_id, count(*) AS n FROM "${spec.schema}".ledger GROUP BY event_id`,
    );
    expect(rows.length).toBe(finished);
    expect(rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
    expect(await stateCounts(records)).toEqual({
      enqueued: 0,
      processing: 0,
      'retry-scheduled': 0,
      completed: finished,
      'dead-lettered': REJECTED.length,
    });

    // The inbox agrees: nothing waits, nothing is the oldest unprocessed.
    const stats = await inbox.stats();
    expect(stats).toMatchObject({ pending: 0, enqueued: 0, processed: EVENTS });
    expect(stats.oldestUnprocessedAt).toBe(undefined);

    // The gauges an operator alerts on, read from both stores.
    const metrics = createMetrics();
    const monitor = createStoreMonitor({ metrics, inbox: inbox as Inbox, records });
    expect(await monitor.runOnce()).toBe(2);
    await monitor.close();
    expect(await gauge(metrics, 'onceflow_oldest_unprocessed_age_seconds')).toBe(0);
    expect(await gauge(metrics, 'onceflow_inbox_pending')).toBe(0);
    expect(await gauge(metrics, 'onceflow_events', { state: 'enqueued' })).toBe(0);
    expect(await gauge(metrics, 'onceflow_events', { state: 'completed' })).toBe(finished);
    expect(await gauge(metrics, 'onceflow_events', { state: 'dead-lettered' })).toBe(
      REJECTED.length,
    );

    // Retention: the inbox forgets every finished event, the record keeps only its dead letters.
    const cutoff = new Date(Date.now() + 60_000);
    expect(await inbox.purge({ olderThan: cutoff })).toBe(EVENTS);
    expect(await inbox.stats()).toMatchObject({ pending: 0, enqueued: 0, processed: 0 });
    expect(await records.purge({ olderThan: cutoff })).toBe(finished);
    expect(await stateCounts(records)).toMatchObject({
      completed: 0,
      'dead-lettered': REJECTED.length,
    });
    await side.close();
  }, 240_000);
});
