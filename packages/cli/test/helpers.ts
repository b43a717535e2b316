import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnvelope, type Delivery, type Envelope } from '@onceflow/core';
import { createEmbedded, type Embedded } from '@onceflow/embedded';
import { afterAll } from 'vitest';
import type { Output } from '../src/output.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh database path in its own temp directory, removed after the file's tests. */
export function tempDbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-cli-'));
  dirs.push(dir);
  return join(dir, 'onceflow.db');
}

/** An output that keeps its lines, plus the joined text of each stream. */
export function captureOutput() {
  const out: string[] = [];
  const err: string[] = [];
  const output: Output = { out: (l) => out.push(l), err: (l) => err.push(l) };
  return {
    output,
    out,
    err,
    text: () => out.join('\n'),
    errText: () => err.join('\n'),
    json: () => JSON.parse(out.join('\n')) as Record<string, unknown>,
  };
}

export function event(
  id: string,
  init: { source?: string; type?: string; receivedAt?: string } = {},
): Envelope {
  return createEnvelope({
    id,
    source: init.source ?? 'stripe',
    type: init.type ?? 'charge.succeeded',
    key: `cus_${id}`,
    payload: { id, amount: 42 },
    receivedAt: init.receivedAt,
  });
}

/** Polls `check` until it returns something other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface Seed {
  /** Claimed, enqueued and completed by the processed-guard. */
  processed?: Envelope[];
  /** Claimed and enqueued, not processed. */
  enqueued?: Envelope[];
  /** Claimed only. */
  pending?: Envelope[];
  /** Published to the queue and dead-lettered by a consumer. */
  deadLettered?: Envelope[];
}

/** Fills an embedded file the way a receiver and a worker would, through the public API only. */
export async function seed(path: string, content: Seed, queue = 'events'): Promise<void> {
  const embedded = createEmbedded({ path, pollIntervalMs: 10 });
  try {
    await embedded.start();
    const { inbox, processed } = embedded;
    for (const env of [
      ...(content.processed ?? []),
      ...(content.enqueued ?? []),
      ...(content.pending ?? []),
    ]) {
      const claim = await inbox.claim(env, { leaseMs: 60_000 });
      if (claim.status !== 'new') throw new Error(`seed: ${env.id} was ${claim.status}`);
      if (!content.pending?.includes(env))
        await inbox.markEnqueued(env.source, env.id, claim.token);
    }
    for (const env of content.processed ?? []) {
      const begun = await processed.begin(env.source, env.id, { leaseMs: 60_000 });
      if (begun.status !== 'acquired') throw new Error(`seed: ${env.id} was ${begun.status}`);
      await processed.complete(env.source, env.id, begun.token);
    }
    const dead = content.deadLettered ?? [];
    if (dead.length > 0) await deadLetter(embedded, queue, dead);
  } finally {
    await embedded.close();
  }
}

async function deadLetter(embedded: Embedded, queue: string, envelopes: Envelope[]) {
  const transport = embedded.transport(queue);
  await transport.start();
  const before = await transport.deadLetters.count();
  await transport.publish(envelopes.map((envelope) => ({ envelope })));
  const sub = await transport.consume(
    (d) =>
      d.deadLetter({
        reason: 'schema: amount must be a string',
        error: { code: 'SCHEMA', name: 'SchemaError', message: 'amount must be a string' },
      }),
    { concurrency: 4, lockMs: 30_000 },
  );
  await waitFor(
    async () => (await transport.deadLetters.count()) === before + envelopes.length,
    'dead letters',
  );
  await sub.close();
}

/** Opens the file again to look at it as a worker would. Close it after use. */
export async function open(path: string): Promise<Embedded> {
  const embedded = createEmbedded({ path, pollIntervalMs: 10 });
  await embedded.start();
  return embedded;
}

/** Consumes the file's `events` queue until `n` deliveries arrived, acking each; returns them. */
export async function drain(path: string, n: number): Promise<Delivery[]> {
  const embedded = await open(path);
  const got: Delivery[] = [];
  try {
    const sub = await embedded.transport('events').consume(
      async (d) => {
        got.push(d);
        await d.ack();
      },
      { concurrency: 1, lockMs: 30_000 },
    );
    await waitFor(() => got.length >= n, `${n} deliveries`);
    await sub.close();
  } finally {
    await embedded.close();
  }
  return got;
}
