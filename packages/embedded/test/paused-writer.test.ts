import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expectAnswersWhileBrokerDown } from '@onceflow/conformance';
import { DEFAULT_PUBLISH_TIMEOUT_MS } from '@onceflow/core/kit';
import { StoreUnavailableError } from '@onceflow/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { tempDbPath, waitFor } from './helpers.js';

const script = fileURLToPath(new URL('./fixtures/write-lock-holder.ts', import.meta.url));

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

/** A child process that took the file's write lock and then stopped itself (SIGSTOP). */
async function pausedWriter(path: string) {
  const child = fork(script, [path], {
    execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const exited = once(child, 'exit');
  await Promise.race([
    once(child, 'message'),
    exited.then(() => {
      throw new Error(`the write-lock holder exited (${child.exitCode}) before it held the lock`);
    }),
  ]);
  // It stops itself just after saying so: a SIGCONT sent before that would be lost.
  await waitFor(() => stopped(child.pid ?? 0), 20_000, 'the write-lock holder stopped');
  return {
    /** SIGCONT: it commits, releasing the lock, and exits. */
    async resume() {
      child.kill('SIGCONT');
      await exited;
    },
  };
}

/** True when the process is stopped (state `T` in /proc/<pid>/stat). */
const stopped = (pid: number): boolean => {
  try {
    return /^\d+ \(.*\) T /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

const settledWithin = (p: Promise<unknown>, ms: number) =>
  Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);

describe('the embedded store under a paused writer', () => {
  it('a process that starts while another is paused holding the write lock opens at once (nothing to migrate); its receiver answers 503 with Retry-After, failing fast once the file is known locked, and 202 once the writer resumes', async () => {
    const path = tempDbPath();
    const first = createEmbedded({ path });
    await first.start(); // migrates
    await first.close();

    const writer = await pausedWriter(path);
    await using embedded = createEmbedded({ path }); // busyTimeoutMs: the default 5 s
    const t0 = performance.now();
    await embedded.start();
    const startMs = performance.now() - t0;
    console.info(`embedded: start() beside a paused writer took ${startMs.toFixed(0)} ms`);
    expect(startMs, 'start() did not wait for the write lock').toBeLessThan(5_000);
    await writer.resume();

    const transport = embedded.transport('q');
    let holder: Awaited<ReturnType<typeof pausedWriter>> | undefined;
    await expectAnswersWhileBrokerDown({
      transport,
      inbox: embedded.inbox,
      publishTimeoutMs: DEFAULT_PUBLISH_TIMEOUT_MS,
      label: 'embedded, a writer paused holding the lock',
      requests: 16,
      down: async () => {
        holder = await pausedWriter(path);
      },
      up: () => holder?.resume(),
    });
  }, 120_000);

  it('start() with a migration due while another process holds the write lock waits, retrying, and opens once it is released', async () => {
    const path = tempDbPath();
    const writer = await pausedWriter(path); // a new file: every migration is due
    await using embedded = createEmbedded({ path, busyTimeoutMs: 200 });
    const starting = embedded.start();
    expect(await settledWithin(starting, 1_500), 'start() still waiting').toBe(false);
    await writer.resume();
    await starting;
    const row = embedded.db.prepare('SELECT max(version) AS v FROM onceflow_migrations').get();
    expect(row).toEqual({ v: MIGRATIONS.length });
  }, 60_000);

  it('a transport’s start() sweeps a backlog of expired dedupe tombstones larger than one statement’s batch', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), dedupeWindowMs: 1_000 });
    await embedded.start();
    const insert = embedded.db.prepare(
      `INSERT INTO onceflow_messages (queue, dedupe_key, state, visible_at, published_at, done_at)
       VALUES ('q', ?, 'done', 0, 0, ?)`,
    );
    const old = Date.now() - 60_000;
    embedded.db.transaction(() => {
      for (let i = 0; i < 2_500; i++) insert.run(`k${i}`, old);
      insert.run('recent', Date.now());
    })();
    await embedded.transport('q').start();
    const left = embedded.db
      .prepare(`SELECT dedupe_key AS key FROM onceflow_messages WHERE queue = 'q'`)
      .all();
    expect(left).toEqual([{ key: 'recent' }]);
  });

  it('start() gives up with StoreUnavailableError after startTimeoutMs', async () => {
    const path = tempDbPath();
    const writer = await pausedWriter(path);
    await using embedded = createEmbedded({ path, busyTimeoutMs: 100, startTimeoutMs: 800 });
    const err = await embedded.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toMatch(/SQLITE_BUSY/);
    await writer.resume();
  }, 60_000);
});
