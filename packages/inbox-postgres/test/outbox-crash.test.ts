import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createMetrics, createOutboxDispatcher, createWorker, defineHandler } from '@onceflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresOutbox } from '../src/index.js';
import { type BrokerName, brokerTransport, removeBrokerQueue } from './brokers.js';
import { fixture, waitUntil } from './helpers.js';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

type Message = { outcome?: string; id?: string; ready?: boolean; hanging?: string[] };

/** A fixture script in its own process, with every IPC message it sent. */
function run(name: string, args: string[]) {
  const child = fork(fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url)), args, {
    execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const messages: Message[] = [];
  child.on('message', (m: Message) => messages.push(m));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async () => {
    child.kill('SIGKILL');
    await exited;
  };
  return { messages, kill };
}

const idsWith = (messages: Message[], outcome: string) =>
  messages.filter((m) => m.outcome === outcome).map((m) => m.id as string);

describe.each(['rabbitmq', 'kafka'] as const)('outbox crashes over %s', (broker: BrokerName) => {
  it('application killed before COMMIT, dispatcher killed between publish and mark: every committed event handled once, no rolled-back one published', async () => {
    await using fx = await fixture({ max: 10 });
    const s = `"${fx.schema}"`;
    await fx.pool.query(`CREATE TABLE ${s}.orders (id bigserial PRIMARY KEY, n int NOT NULL)`);
    // no unique constraint: a second effect of one event would show as a second row
    await fx.pool.query(`CREATE TABLE ${s}.ledger (event_id text NOT NULL)`);
    const queue = `onceflow-outbox-${randomBytes(4).toString('hex')}`;
    const transport = brokerTransport(broker, queue);
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    const metrics = createMetrics();
    const delivered = new Set<string>();
    const worker = createWorker({
      transport,
      records: fx.store,
      metrics,
      concurrency: 4,
      handlers: [
        defineHandler({
          type: 'order.placed',
          handle: async (_event, ctx) => {
            delivered.add(ctx.envelope.id);
            await fx.pool.query(`INSERT INTO ${s}.ledger (event_id) VALUES ($1)`, [
              ctx.envelope.id,
            ]);
          },
        }),
      ],
    });
    try {
      await worker.start();
      const first = run('outbox-dispatcher', [broker, queue, fx.schema, '3', '3000']);
      await waitUntil(async () => first.messages.some((m) => m.ready), 30_000);

      const app = run('outbox-app', [fx.schema, '40']);
      await waitUntil(async () => idsWith(app.messages, 'held').length === 1, 60_000);
      await app.kill();
      await waitUntil(async () => first.messages.some((m) => m.hanging), 60_000);
      await first.kill();
      const hung = first.messages.find((m) => m.hanging)?.hanging ?? [];

      const committed = idsWith(app.messages, 'committed');
      const lost = [...idsWith(app.messages, 'rolled-back'), ...idsWith(app.messages, 'held')];
      expect(committed.length).toBe(30);
      expect(lost.length).toBe(10);
      expect(hung.length).toBeGreaterThan(0);

      // another dispatcher takes the killed one's rows back once their lease ends
      await using second = createOutboxDispatcher({ outbox, transport, pollIntervalMs: 50 });
      second.start();
      const ledger = async () => {
        const { rows } = await fx.pool.query<{ event_id: string; n: number }>(
          `SELECT event_id, count(*)::int AS n FROM ${s}.ledger GROUP BY event_id`,
        );
        return new Map(rows.map((r) => [r.event_id, r.n]));
      };
      await waitUntil(async () => (await ledger()).size >= committed.length, 90_000);
      await waitUntil(async () => (await outbox.stats()).unsent === 0, 30_000);
      // the batch the killed dispatcher had published went out twice: the record guard acks the copy
      const duplicates = async () =>
        (await metrics.duplicatesSuppressed.get()).values.reduce((n, v) => n + v.value, 0);
      await waitUntil(async () => (await duplicates()) >= hung.length, 60_000);

      const effects = await ledger();
      expect([...effects.keys()].sort()).toEqual([...committed].sort());
      for (const id of committed) expect(effects.get(id), `effects of ${id}`).toBe(1);
      for (const id of lost) {
        expect(delivered.has(id), `${id} delivered`).toBe(false);
        expect(await fx.store.get('orders', id), `record of ${id}`).toBeUndefined();
      }
      const { rows } = await fx.pool.query<{ id: string; attempts: number }>(
        `SELECT id, attempts FROM ${s}.onceflow_inbox_outbox WHERE id = ANY($1)`,
        [hung],
      );
      for (const row of rows) expect(row.attempts, `leases of ${row.id}`).toBeGreaterThanOrEqual(2);
      for (const id of committed) {
        expect((await fx.store.get('orders', id))?.state, `state of ${id}`).toBe('completed');
      }
    } finally {
      await worker.close();
      await transport.close();
      await removeBrokerQueue(broker, queue);
    }
  }, 240_000);
});
