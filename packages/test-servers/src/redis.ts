import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of `startRedisServer`. */
export interface RedisServerOptions {
  /** The port it listens on (loopback only). Pick one no other test uses. */
  readonly port: number;
  /**
   * Its data directory (the AOF lives there). Default: a new temporary directory, removed when
   * the server is disposed. A directory passed here is left in place.
   */
  readonly dir?: string | undefined;
  /** More `redis-server` arguments, after the defaults (a later one wins): `--cluster-enabled yes`, … */
  readonly args?: readonly string[] | undefined;
  /** Longest wait for "Ready to accept connections" (after replaying the AOF), in ms. Default 10 s. */
  readonly readyTimeoutMs?: number | undefined;
}

/**
 * A `redis-server` the test owns, never the machine's shared Redis. By default it persists every
 * write before it replies (`appendonly yes`, `appendfsync always`, no RDB snapshots), so it can be
 * killed and started again with its data. `await using` kills it and removes its own directory.
 */
export interface RedisServer extends AsyncDisposable {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly dir: string;
  /** SIGKILL: a crash, no shutdown save; only what the AOF already synced survives. No-op if not running. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /**
   * SIGSTOP: the server hangs with its sockets open (connections accepted, nothing answered), as
   * a server behind a network partition looks to a client. `resume()` (SIGCONT) undoes it.
   */
  pause(): void;
  resume(): void;
}

const READY = 'Ready to accept connections';

function spawnServer(port: number, dir: string, args: readonly string[], timeoutMs: number) {
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no'],
      ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const ready = new Promise<ChildProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server on ${port} not ready after ${timeoutMs} ms: ${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes(READY)) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stdout.resume(); // keep draining, so a chatty server never blocks on a full pipe
      resolve(child);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`redis-server on ${port} could not start: ${err.message}`, { cause: err }));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`redis-server on ${port} exited (${code ?? signal}): ${output}`));
    });
  });
  return ready;
}

/** Starts `redis-server` on `options.port`; resolves once it accepts connections. */
export async function startRedisServer(options: RedisServerOptions): Promise<RedisServer> {
  const { port, args = [], readyTimeoutMs = 10_000 } = options;
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), `onceflow-redis-${port}-`));
  let running: ChildProcess | undefined;

  const start = async () => {
    if (running) throw new Error(`redis-server on ${port} is already running`);
    running = await spawnServer(port, dir, args, readyTimeoutMs);
  };
  const kill = async () => {
    const child = running;
    running = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };

  try {
    await start();
  } catch (err) {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    kill,
    start,
    pause: () => void running?.kill('SIGSTOP'),
    resume: () => void running?.kill('SIGCONT'),
    async [Symbol.asyncDispose]() {
      await kill();
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
