import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEnvelope,
  createWorker,
  defineHandler,
  type Delivery,
  type Envelope,
  NonRetryableError,
  defineTransitions,
  REDRIVE_HEADER,
  type RecordStore,
  type Transport,
  type Worker,
} from '@onceflow/core';
import { createEmbedded, type Embedded } from '@onceflow/embedded';
import { afterAll, expect } from 'vitest';
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
  init: {
    source?: string;
    type?: string;
    receivedAt?: string;
    headers?: Record<string, string>;
  } = {},
): Envelope {
  return createEnvelope({
    id,
    source: init.source ?? 'stripe',
    type: init.type ?? 'charge.succeeded',
    key: `cus_${id}`,
    payload: { id, amount: 42 },
    headers: init.headers,
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

/** The least time between progress lines, and before the first (`createProgress`'s default). */
export const PROGRESS_INTERVAL_MS = 1000;

/**
 * Asserts that a run of `verb` printed nothing on stderr but its progress lines: none at all
 * when it took less than `PROGRESS_INTERVAL_MS` (`tookMs`, measured around the run), else
 * progress only, as a run that a disk sync or a slow broker held up longer rightly prints.
 */
export function expectOnlyProgress(err: readonly string[], verb: string, tookMs?: number): void {
  if (tookMs !== undefined && tookMs < PROGRESS_INTERVAL_MS) {
    expect(err, 'stderr of a run shorter than the progress interval').toEqual([]);
    return;
  }
  const progress = new RegExp(`^${verb}: \\d+/\\d+ \\(\\d+%\\), [\\d.]+/s, ETA \\S+( \\S+)?$`);
  for (const line of err) expect(line, 'stderr holds progress lines only').toMatch(progress);
}

/** Creates an empty embedded file (schema applied), as a deployed pipeline would have. */
export async function createDbFile(path = tempDbPath()): Promise<string> {
  const embedded = createEmbedded({ path });
  await embedded.start();
  await embedded.close();
  return path;
}

export const SCHEMA_ERROR = {
  code: 'SCHEMA',
  name: 'SchemaError',
  message: 'amount must be a string',
} as const;

/** Records each envelope as a dead letter, as a worker that gave up would (the store's own API). */
export async function deadLetter(
  records: RecordStore,
  envelopes: readonly Envelope[],
  reason = 'schema: amount must be a string',
): Promise<void> {
  // One at a time, so the records' updatedAt (page order) follows the array.
  for (const envelope of envelopes) {
    await records.deadLetter(envelope, undefined, {
      reason,
      error: SCHEMA_ERROR,
      attempts: 3,
      actor: 'worker-1',
    });
    await new Promise((r) => setTimeout(r, 2));
  }
}

export interface Seed {
  /** Claimed, enqueued and completed by a worker's begin and complete. */
  completed?: Envelope[];
  /** Claimed and enqueued, not processed. */
  enqueued?: Envelope[];
  /** Claimed only. */
  received?: Envelope[];
}

/** Fills an embedded file the way a receiver and a worker would, through the public API only. */
export async function seed(path: string, content: Seed): Promise<void> {
  const embedded = createEmbedded({ path, pollIntervalMs: 10 });
  try {
    await embedded.start();
    const { inbox, records } = embedded;
    for (const env of [
      ...(content.completed ?? []),
      ...(content.enqueued ?? []),
      ...(content.received ?? []),
    ]) {
      const claim = await inbox.claim(env, { leaseMs: 60_000 });
      if (claim.status !== 'new') throw new Error(`seed: ${env.id} was ${claim.status}`);
      if (!content.received?.includes(env))
        await inbox.markEnqueued(env.source, env.id, claim.token);
    }
    for (const env of content.completed ?? []) {
      const begun = await records.begin(env, { leaseMs: 60_000, attempt: 1, consumer: 'seed' });
      if (begun.status !== 'acquired') throw new Error(`seed: ${env.id} was ${begun.status}`);
      await records.complete(env.source, env.id, begun.token);
    }
  } finally {
    await embedded.close();
  }
}

/** Opens the file again to look at it as a worker would. Close it after use. */
export async function open(path: string): Promise<Embedded> {
  const embedded = createEmbedded({ path, pollIntervalMs: 10 });
  await embedded.start();
  return embedded;
}

/** Consumes the file's queue until `n` deliveries arrived, acking each; returns them. */
export async function drain(path: string, n: number, queue = 'events'): Promise<Delivery[]> {
  const embedded = await open(path);
  const got: Delivery[] = [];
  try {
    const sub = await embedded.transport(queue).consume(
      async (d) => {
        got.push(d);
        await d.ack();
      },
      { concurrency: 1 },
    );
    await waitFor(() => got.length >= n, `${n} deliveries`);
    await sub.close();
  } finally {
    await embedded.close();
  }
  return got;
}

/**
 * A real worker on `transport` and `records` whose handler fails by the event id: `*twice` fails
 * its first attempt (retried), `*poison` fails for good (`NonRetryableError`, a dead letter)
 * unless it is a redriven copy; everything else succeeds. Start it, close it after use.
 */
const ORDER = defineTransitions({ pending: ['approved'], approved: ['shipped'] });

export function testWorker(transport: Transport, records: RecordStore): Worker {
  return createWorker({
    transport,
    records,
    consumer: 'worker-1',
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
    handlers: [
      defineHandler({
        type: 'charge.succeeded',
        async handle(_event, ctx) {
          const { id, headers } = ctx.envelope;
          if (id.endsWith('twice') && ctx.attempt === 1) throw new Error('ledger timed out');
          if (id.endsWith('poison') && headers[REDRIVE_HEADER] === undefined)
            throw new NonRetryableError('amount must be a string');
          // A state change the order may not make: dead-lettered for review.
          if (id.endsWith('review')) ORDER.check('approved', 'pending');
        },
      }),
    ],
  });
}
