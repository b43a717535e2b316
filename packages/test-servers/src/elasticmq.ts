import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of `startElasticMqServer`. */
export interface ElasticMqServerOptions {
  /** The SQS port (loopback only). Pick one no other test uses; never 9324 (the shared server). */
  readonly port: number;
  /**
   * Keep queues and messages in an H2 file (ElasticMQ's `messages-storage`, flushed at each
   * commit) so `kill()` and `start()` bring them back. Default true.
   */
  readonly persist?: boolean | undefined;
  /** Longest wait until it answers SQS requests, in ms. Default 90 s (a cold JVM). */
  readonly readyTimeoutMs?: number | undefined;
}

/**
 * An ElasticMQ the test owns, never the shared one on 9324: started by the project's brokers
 * script (scripts/brokers/elasticmq.mjs) with its own config and data directory, which survives
 * `kill()`. `await using` kills it and removes its directory.
 */
export interface ElasticMqServer extends AsyncDisposable {
  readonly port: number;
  /** `http://127.0.0.1:<port>`: the `endpoint` of an `SQSClient`. */
  readonly endpoint: string;
  /** Holds its config, H2 file, pid file and log. */
  readonly dir: string;
  /** SIGKILL (a crash: only what H2 already flushed survives). No-op if not running. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data; resolves once it answers SQS requests. */
  start(): Promise<void>;
}

interface BrokersScript {
  startElasticMq(options: Record<string, unknown>): Promise<number>;
  stopElasticMq(options: Record<string, unknown>): Promise<boolean>;
}

const script = new URL('../../../scripts/brokers/elasticmq.mjs', import.meta.url).href;
const cacheDir =
  process.env.ONCEFLOW_BROKERS_CACHE ?? join(homedir(), '.cache', 'onceflow', 'brokers');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts ElasticMQ on `options.port`; resolves once it answers SQS requests. */
export async function startElasticMqServer(
  options: ElasticMqServerOptions,
): Promise<ElasticMqServer> {
  const { port, persist = true, readyTimeoutMs = 90_000 } = options;
  const { startElasticMq, stopElasticMq } = (await import(script)) as BrokersScript;
  const dir = mkdtempSync(join(tmpdir(), `onceflow-elasticmq-${port}-`));
  const name = `elasticmq-${port}`;
  const common = { cacheDir, stateDir: dir, name };
  const start = async () => {
    await startElasticMq({ ...common, port, persist, timeoutMs: readyTimeoutMs });
  };
  const kill = async () => {
    let pid: number;
    try {
      pid = Number(readFileSync(join(dir, `${name}.pid`), 'utf8'));
    } catch {
      return; // never started, or already stopped
    }
    if (pid > 0 && alive(pid)) {
      try {
        process.kill(-pid, 'SIGKILL'); // the detached process group: the JVM
      } catch {
        process.kill(pid, 'SIGKILL');
      }
      while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
    }
    await stopElasticMq({ ...common, graceMs: 0 }); // removes the pid file
  };
  try {
    await start();
  } catch (err) {
    await kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    endpoint: `http://127.0.0.1:${port}`,
    dir,
    kill,
    start,
    async [Symbol.asyncDispose]() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
