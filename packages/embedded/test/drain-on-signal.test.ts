import { type ChildProcess, fork } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createWorker, defineHandler } from '@onceflow/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { tempDbPath, waitFor } from './helpers.js';

const script = fileURLToPath(new URL('./fixtures/drain-host.ts', import.meta.url));
const SECRET = 'drain-test-secret';

interface Host {
  readonly child: ChildProcess;
  readonly url: string;
  readonly started: string[];
  readonly lines: () => Record<string, unknown>[];
  readonly exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function startHost(path: string, mode: 'sleep' | 'hang'): Promise<Host> {
  const child = fork(script, [path, mode], {
    execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  const started: string[] = [];
  let port = 0;
  child.on('message', (m: { kind: string; port?: number; id?: string }) => {
    if (m.kind === 'ready') port = m.port ?? 0;
    if (m.kind === 'started' && m.id) started.push(m.id);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  await waitFor(() => port > 0, 30_000, 'the host to listen');
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, url: `http://127.0.0.1:${port}`, started, lines, exited };
}

/** POSTs a GitHub push delivery signed with the host's secret. */
async function push(url: string, id: string): Promise<Response> {
  const body = JSON.stringify({ ref: 'refs/heads/main', zen: 'drain' });
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  return fetch(`${url}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': signature,
      'x-github-delivery': id,
      'x-github-event': 'push',
    },
    body,
  });
}

const reportOf = (host: Host) => host.lines().find((l) => 'timedOut' in l);

describe('drainOnSignal on SIGTERM (embedded default, real HTTP)', () => {
  it('answers 503 while draining, lets the in-flight deliveries finish, closes and exits 0', async () => {
    const path = tempDbPath();
    const host = await startHost(path, 'sleep');
    expect((await fetch(`${host.url}/readyz`)).status).toBe(200);
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) expect((await push(host.url, id)).status).toBe(202);
    await waitFor(() => host.started.length === 3, 20_000, 'three handlers running');

    host.child.kill('SIGTERM');
    await waitFor(
      async () => (await fetch(`${host.url}/readyz`)).status === 503,
      10_000,
      'readiness to fail',
    );
    const late = await push(host.url, randomUUID());
    expect(late.status).toBe(503);
    expect(late.headers.get('retry-after')).toBe('5');
    expect(await late.json()).toEqual({ status: 'draining' });

    expect(await host.exited).toBe(0);
    expect(reportOf(host)).toMatchObject({
      msg: 'shutdown: drained',
      reason: 'SIGTERM',
      timedOut: false,
      requestsLeft: 0,
      deliveriesLeft: 0,
      notClosed: [],
    });
    await using embedded = createEmbedded({ path });
    for (const id of ids)
      expect((await embedded.records.get('github', id))?.state).toBe('completed');
    expect(await embedded.records.count({})).toBe(3);
  }, 90_000);

  it('at the deadline reports the delivery it left, exits 1, and the event is delivered again', async () => {
    const path = tempDbPath();
    const host = await startHost(path, 'hang');
    const id = randomUUID();
    expect((await push(host.url, id)).status).toBe(202);
    await waitFor(() => host.started.length === 1, 20_000, 'the handler running');

    host.child.kill('SIGTERM');
    expect(await host.exited).toBe(1);
    expect(reportOf(host)).toMatchObject({
      msg: 'shutdown: deadline passed or a close failed; see what was left',
      timedOut: true,
      deliveriesLeft: 1,
    });

    // Nothing unfinished was acked: once its lock runs out, another worker gets it.
    await using embedded = createEmbedded({ path });
    const transport = embedded.transport('webhooks', { lockMs: 2_000 });
    const handled: number[] = [];
    await using worker = createWorker({
      transport,
      records: embedded.records,
      handlers: [
        defineHandler({
          type: 'push',
          async handle(_e, ctx) {
            handled.push(ctx.attempt);
          },
        }),
      ],
    });
    await worker.start();
    await waitFor(
      async () => (await embedded.records.get('github', id))?.state === 'completed',
      20_000,
      'the left delivery to complete on the next worker',
    );
    expect(handled).toEqual([2]);
  }, 90_000);
});
