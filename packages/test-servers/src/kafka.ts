import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of `startKafkaServer`. */
export interface KafkaServerOptions {
  /** The broker port (loopback only). Pick one no other test uses. */
  readonly port: number;
  /** The KRaft controller port. Default `port + 1`. */
  readonly controllerPort?: number | undefined;
  /** Longest wait until producers and consumer groups work, in ms. Default 120 s (a cold JVM). */
  readonly readyTimeoutMs?: number | undefined;
}

/**
 * A single-node Kafka (KRaft) the test owns, never the shared broker on 9092: started by the
 * project's brokers script (scripts/brokers/kafka.mjs) with its own data directory, which
 * survives `stop()` so `start()` brings the same topics, records and committed offsets back.
 * `await using` stops it and removes its directory.
 */
export interface KafkaServer extends AsyncDisposable {
  readonly port: number;
  /** `['127.0.0.1:<port>']` */
  readonly brokers: readonly string[];
  /** Holds its config, data, pid file and log. */
  readonly dir: string;
  /** SIGTERM (a controlled shutdown) or, with `kill`, SIGKILL (a crash). No-op if not running. */
  stop(options?: { readonly kill?: boolean | undefined }): Promise<void>;
  /** Starts it again on the same port and data; resolves once consumer groups work. */
  start(): Promise<void>;
  /**
   * SIGSTOP: the broker hangs with its sockets open (connections accepted, nothing answered), as
   * a broker behind a network partition looks to a client. `resume()` (SIGCONT) undoes it.
   */
  pause(): void;
  resume(): void;
}

interface BrokersScript {
  startKafka(options: Record<string, unknown>): Promise<number>;
  stopKafka(options: Record<string, unknown>): Promise<boolean>;
}

const script = new URL('../../../scripts/brokers/kafka.mjs', import.meta.url).href;
const cacheDir =
  process.env.ONCEFLOW_BROKERS_CACHE ?? join(homedir(), '.cache', 'onceflow', 'brokers');

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });

/** Starts Kafka on `options.port`; resolves once producers and consumer groups work. */
export async function startKafkaServer(options: KafkaServerOptions): Promise<KafkaServer> {
  const { port, controllerPort = port + 1, readyTimeoutMs = 120_000 } = options;
  const { startKafka, stopKafka } = (await import(script)) as BrokersScript;
  const dir = mkdtempSync(join(tmpdir(), `onceflow-kafka-${port}-`));
  const name = `kafka-${port}`;
  const common = { cacheDir, stateDir: dir, name };
  const start = async () => {
    await startKafka({ ...common, port, controllerPort, timeoutMs: readyTimeoutMs });
  };
  const stop = async ({ kill = false } = {}) => {
    await stopKafka({ ...common, graceMs: kill ? 0 : 30_000 });
    while (await listening(port)) await new Promise((r) => setTimeout(r, 100));
  };
  const signal = (sig: 'SIGSTOP' | 'SIGCONT') => {
    try {
      process.kill(Number(readFileSync(join(dir, `${name}.pid`), 'utf8')), sig);
    } catch {
      // not running: nothing to pause or resume
    }
  };
  try {
    await start();
  } catch (err) {
    await stop({ kill: true });
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    brokers: [`127.0.0.1:${port}`],
    dir,
    stop,
    start,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async [Symbol.asyncDispose]() {
      signal('SIGCONT');
      await stop({ kill: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
