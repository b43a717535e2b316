import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { event, tempDbPath, waitFor } from './helpers.js';

const script = fileURLToPath(new URL('./fixtures/consumer-process.ts', import.meta.url));

interface Report {
  type: 'ready' | 'delivery' | 'closed';
  id?: string;
  attempt?: number;
  pid: number;
}

interface Worker {
  child: ChildProcess;
  reports: Report[];
  exited: Promise<void>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Forks a worker process on the file; resolves once it consumes. */
async function startWorker(
  path: string,
  mode: 'ack' | 'hang',
  lockMs: number,
  concurrency = 4,
  pauseMs = 3,
) {
  const child = fork(
    script,
    [path, 'q', mode, String(lockMs), String(concurrency), String(pauseMs)],
    {
      execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  children.push(child);
  const reports: Report[] = [];
  child.on('message', (m) => reports.push(m as Report));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const worker: Worker = { child, reports, exited };
  await waitFor(() => reports.some((r) => r.type === 'ready'), 20_000, 'worker ready');
  return worker;
}

const deliveries = (...workers: Worker[]) =>
  workers.flatMap((w) => w.reports.filter((r) => r.type === 'delivery'));

describe('embedded transport across processes', () => {
  it('two worker processes competing for one queue never both get a message', async () => {
    const path = tempDbPath();
    await using publisher = createEmbedded({ path });
    await publisher.start();
    // Each holds a delivery up to 40 ms, two at a time: one alone would need about 4 s for the
    // 200, so the other, polling every 10 ms, gets some however loaded the machine is.
    const [a, b] = await Promise.all([
      startWorker(path, 'ack', 30_000, 2, 40),
      startWorker(path, 'ack', 30_000, 2, 40),
    ]);
    const transport = publisher.transport('q');
    const total = 200;
    for (let i = 0; i < total; i += 20) {
      const batch = Array.from({ length: 20 }, (_, j) => ({ envelope: event(`evt_${i + j}`) }));
      await transport.publish(batch);
      await new Promise((r) => setImmediate(r));
    }
    await waitFor(() => deliveries(a, b).length >= total, 20_000, 'all deliveries');
    for (const w of [a, b]) w.child.send('close');
    await Promise.all([a.exited, b.exited]);

    const all = deliveries(a, b);
    expect(all).toHaveLength(total);
    expect(new Set(all.map((d) => d.id)).size).toBe(total);
    expect(all.every((d) => d.attempt === 1)).toBe(true);
    // Both really competed.
    expect(deliveries(a).length).toBeGreaterThan(0);
    expect(deliveries(b).length).toBeGreaterThan(0);
    const left = publisher.db
      .prepare(`SELECT count(*) AS n FROM onceflow_messages WHERE state = 'queued'`)
      .get();
    expect(left).toEqual({ n: 0 });
  });

  it('redelivers with attempt 2 after a worker process is SIGKILLed mid-lease', async () => {
    const path = tempDbPath();
    await using survivor = createEmbedded({ path, pollIntervalMs: 10 });
    await survivor.start();
    const lockMs = 800;
    const doomed = await startWorker(path, 'hang', lockMs, 1);
    const transport = survivor.transport('q');
    // The doomed worker's lease starts after this, however late its report reaches this process.
    const publishedAt = Date.now();
    await transport.publish([{ envelope: event('evt_crash') }]);
    await waitFor(() => deliveries(doomed).length === 1, 10_000, 'first delivery');
    const { leasedUntil } = survivor.db
      .prepare('SELECT visible_at AS leasedUntil FROM onceflow_messages')
      .get() as { leasedUntil: number };
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    // The process that takes over sees the message only once the dead worker's lease ran out.
    const got: { attempt: number; at: number }[] = [];
    const sub = await transport.consume(
      async (d) => {
        got.push({ attempt: d.attempt, at: Date.now() });
        await d.ack();
      },
      { concurrency: 1 },
    );
    await waitFor(() => got.length === 1, 10_000, 'redelivery');
    await sub.close();
    expect(deliveries(doomed)[0]).toMatchObject({ id: 'evt_crash', attempt: 1 });
    expect(got[0]!.attempt).toBe(2);
    expect(leasedUntil - publishedAt, 'the lease is as long as asked').toBeGreaterThanOrEqual(
      lockMs,
    );
    expect(got[0]!.at, 'not before the lease ran out').toBeGreaterThanOrEqual(leasedUntil);
    expect(survivor.db.prepare('SELECT state, attempt FROM onceflow_messages').all()).toEqual([
      { state: 'done', attempt: 2 },
    ]);
  });
});
