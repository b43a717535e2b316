import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnvelope, type Envelope } from '@onceflow/core';
import { afterAll } from 'vitest';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh database path in its own temp directory, removed after the file's tests. */
export function tempDbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-embedded-'));
  dirs.push(dir);
  return join(dir, 'onceflow.db');
}

export function event(id: string, init: { key?: string; payload?: unknown } = {}): Envelope {
  return createEnvelope({
    id,
    source: 'test',
    type: 'test.event',
    key: init.key,
    payload: init.payload ?? { id },
  });
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A promise with its resolver, for waiting on a handler event. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
