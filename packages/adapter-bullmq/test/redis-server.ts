import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '@onceflow/conformance';
import { Redis } from 'ioredis';

/**
 * A Redis server of the test's own, persisting every write before it replies (`appendonly yes`,
 * `appendfsync always`) in a temporary directory, so it can be killed and started again with its
 * data. Never the machine's shared Redis.
 */
export interface OwnRedis extends AsyncDisposable {
  readonly url: string;
  /** Kills the server (SIGKILL: no shutdown save, only what the AOF holds survives). */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory; resolves once it answers PING. */
  start(): Promise<void>;
}

export async function startOwnRedis(port: number): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-bullmq-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let server: ChildProcess | undefined;

  const start = async () => {
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes'].concat([
        '--appendfsync',
        'always',
        '--dir',
        dir,
      ]),
      { stdio: 'ignore' },
    );
    server = child;
    const probe = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => {});
    try {
      await waitUntil(
        async () => {
          if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited`);
          return probe.connect().then(
            async () => (await probe.ping()) === 'PONG',
            () => false,
          );
        },
        { timeoutMs: 10_000, intervalMs: 50, message: `redis-server on port ${port} to answer` },
      );
    } finally {
      probe.disconnect();
    }
  };
  const kill = async () => {
    const child = server;
    server = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };

  await start();
  return {
    url,
    kill,
    start,
    async [Symbol.asyncDispose]() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
