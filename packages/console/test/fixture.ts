import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEnvelope, createWorker, defineHandler, type Envelope } from '@onceflow/core';
import { type StackName, openStack } from './stacks.js';
import { type ConsoleOptions, createConsole } from '../src/index.js';

export const TOKEN = 'console-test-token-0123456789';
export const POISON_ID = 'evt_poison';
export const SCRIPT_PAYLOAD =
  '<script>window.__pwned = true; alert("x")</script><img src=x onerror="window.__pwned=1">';

export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const order = (id: string, payload: unknown): Envelope =>
  createEnvelope({
    id,
    source: 'shop',
    type: 'order.paid',
    key: 'cus_1',
    payload,
    headers: { 'x-shop-signature': 'sha256=deadbeef', 'x-request-id': `req-${id}` },
  });

/**
 * An embedded store and transport with a worker: ten orders received as a receiver does and processed, and one poison order
 * (its payload carries HTML and script) dead-lettered after two failed attempts. Then a console
 * that can write at `/console` and a read-only one at `/ro`, on one real HTTP server.
 */
export async function startFixture(
  consoleOptions: Partial<ConsoleOptions> = {},
  stackName: StackName = 'embedded',
) {
  const stack = await openStack(stackName);
  const { records, inbox, transport } = stack;
  const runs = new Map<string, number>();
  let poisonFails = true;
  const worker = createWorker({
    transport,
    records: records,
    retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
    handlers: [
      defineHandler({
        type: 'order.paid',
        async handle(_payload, ctx) {
          runs.set(ctx.envelope.id, (runs.get(ctx.envelope.id) ?? 0) + 1);
          if (ctx.envelope.id === POISON_ID && poisonFails)
            throw new Error('card declined <b>twice</b>');
        },
      }),
    ],
  });
  await worker.start();
  // As a receiver does: claim in the inbox (which keeps the envelope), publish, mark enqueued.
  const orders = [
    ...Array.from({ length: 10 }, (_, i) => order(`evt_${i}`, { amount: i * 100 })),
    order(POISON_ID, { amount: 1, note: SCRIPT_PAYLOAD }),
  ];
  for (const envelope of orders) {
    const claim = await inbox.claim(envelope, { leaseMs: 60_000 });
    if (claim.status !== 'new') throw new Error(`claim of ${envelope.id}: ${claim.status}`);
    await transport.publish([{ envelope }]);
    await inbox.markEnqueued(envelope.source, envelope.id, claim.token);
  }
  await waitFor(
    async () => (await records.get('shop', POISON_ID))?.state === 'dead-lettered',
    'the poison order dead-lettered',
  );
  await waitFor(
    async () => (await records.count({ state: 'completed' })) === 10,
    'ten orders completed',
  );

  const writable = createConsole({
    records: records,
    transport,
    backlog: { orders: transport },
    inbox,
    auth: { token: TOKEN, operator: 'alice' },
    basePath: '/console',
    write: true,
    ...consoleOptions,
  });
  const readOnly = createConsole({
    records: records,
    transport,
    auth: { token: TOKEN, operator: 'bob' },
    basePath: '/ro',
  });
  const server: Server = createServer((req, res) =>
    req.url?.startsWith('/ro') ? readOnly.node(req, res) : writable.node(req, res),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    records,
    inbox,
    runs,
    healPoison: () => {
      poisonFails = false;
    },
    async [Symbol.asyncDispose]() {
      await new Promise<void>((r) => server.close(() => r()));
      await worker.close();
      await stack.close();
    },
  };
}
