import { describe, expect, it } from 'vitest';
import {
  createProbes,
  createReceiver,
  createWorker,
  defineHandler,
  type HealthCheck,
  stripe,
} from '../../src/index.js';
import { createMemoryStore, createMemoryTransport } from '../../src/testing.js';
import { listen, STRIPE_SECRET } from '../receiver/helpers.js';

interface Body {
  status: 'pass' | 'fail';
  checks: Record<string, { status: 'pass' | 'fail'; durationMs: number; error?: string }>;
}

const get = async (url: string): Promise<{ status: number; body: Body }> => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Body };
};

/** A store or transport whose check does what the test says. */
const dependency = (check: HealthCheck['check']): HealthCheck => ({ check });

/** Serves `/healthz` and `/readyz` from the probes, the rest from the receiver. */
function serve(probes: ReturnType<typeof createProbes>) {
  return listen((req, res) => {
    if (req.url === '/healthz') return void probes.live.node(req, res);
    if (req.url === '/readyz') return void probes.ready.node(req, res);
    res.writeHead(404).end();
  });
}

describe('probes', () => {
  it('a receiver is ready while its store and transport answer, and not once it drains', async () => {
    const store = createMemoryStore();
    const transport = createMemoryTransport();
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
      inbox: store,
      transport,
    });
    await using http = await serve(createProbes({ store, transport, receiver }));

    const live = await get(`${http.url}/healthz`);
    expect(live.status).toBe(200);
    expect(live.body.status).toBe('pass');
    expect(live.body.checks['event-loop']).toMatchObject({ status: 'pass' });

    const ready = await get(`${http.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(Object.keys(ready.body.checks).sort()).toEqual(['receiver', 'store', 'transport']);
    for (const check of Object.values(ready.body.checks)) {
      expect(check.status).toBe('pass');
      expect(check.durationMs).toBeGreaterThanOrEqual(0);
    }

    await receiver.drain();
    const draining = await get(`${http.url}/readyz`);
    expect(draining.status).toBe(503);
    expect(draining.body.checks.receiver).toMatchObject({ status: 'fail', error: /draining/ });
    expect(draining.body.checks.store?.status).toBe('pass');
    await transport.close();
  });

  it('names the dependency that failed or did not answer within the time limit', async () => {
    const down = dependency(async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    });
    let aborted = false;
    const hung = dependency(
      (signal) =>
        new Promise<void>(() => {
          signal.addEventListener('abort', () => {
            aborted = true;
          });
        }),
    );
    await using http = await serve(createProbes({ store: down, transport: hung, timeoutMs: 300 }));
    const ready = await get(`${http.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.status).toBe('fail');
    expect(ready.body.checks.store).toMatchObject({ status: 'fail', error: /ECONNREFUSED/ });
    expect(ready.body.checks.transport).toMatchObject({
      status: 'fail',
      error: 'no answer within 300 ms',
    });
    expect(ready.body.checks.transport?.durationMs).toBeGreaterThanOrEqual(290);
    expect(aborted).toBe(true);
    // Liveness does not depend on dependencies: a restart would not bring PostgreSQL back.
    expect((await get(`${http.url}/healthz`)).status).toBe(200);
  });

  it('a store or transport without a check counts as reachable', async () => {
    const probes = createProbes({ store: {}, transport: {} });
    const report = await probes.ready.run();
    expect(report).toMatchObject({
      status: 'pass',
      checks: { store: { status: 'pass' }, transport: { status: 'pass' } },
    });
  });

  it('a worker is ready once consuming, and not live while a delivery is stalled', async () => {
    const store = createMemoryStore();
    const transport = createMemoryTransport({ lockMs: 300 });
    let release: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    const worker = createWorker({
      transport,
      records: store,
      heartbeatMs: false,
      shutdownTimeoutMs: 5_000,
      handlers: [
        defineHandler({
          type: 'slow',
          async handle() {
            started++;
            await running;
          },
        }),
      ],
    });
    const probes = createProbes({ worker });
    await using http = await serve(probes);

    const before = await get(`${http.url}/readyz`);
    expect(before.status).toBe(503);
    expect(before.body.checks.worker?.error).toBe('worker is idle, not consuming');

    await worker.start();
    expect((await get(`${http.url}/readyz`)).status).toBe(200);
    expect((await get(`${http.url}/healthz`)).status).toBe(200);

    await transport.publish([
      {
        envelope: {
          id: 'evt_stall',
          source: 'test',
          type: 'slow',
          payload: new TextEncoder().encode('{}'),
          headers: {},
          receivedAt: new Date().toISOString(),
          payloadHash: 'h',
        },
      },
    ]);
    await expect.poll(() => started, { timeout: 10_000 }).toBe(1);
    // No heartbeat: past the 300 ms lock the running delivery has renewed nothing.
    await expect
      .poll(async () => (await get(`${http.url}/healthz`)).status, { timeout: 10_000 })
      .toBe(503);
    const stalled = await get(`${http.url}/healthz`);
    expect(stalled.body.checks.worker?.error).toMatch(/^\d+ of \d+ deliveries stalled/);
    expect(stalled.body.checks['event-loop']?.status).toBe('pass');

    release();
    await expect
      .poll(async () => (await get(`${http.url}/healthz`)).status, { timeout: 10_000 })
      .toBe(200);
    await worker.close();
    expect((await get(`${http.url}/readyz`)).body.checks.worker?.error).toBe(
      'worker is closed, not consuming',
    );
    await transport.close();
  });

  it('answers Fetch API requests too, without a body on HEAD', async () => {
    const probes = createProbes({
      checks: {
        migrations: async () => {
          throw new Error('schema 3 expected, found 2');
        },
      },
    });
    const res = await probes.ready.fetch(new Request('http://localhost/readyz'));
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toMatchObject({
      status: 'fail',
      checks: { migrations: { status: 'fail', error: 'schema 3 expected, found 2' } },
    });
    const head = await probes.live.fetch(
      new Request('http://localhost/healthz', { method: 'HEAD' }),
    );
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });
});
