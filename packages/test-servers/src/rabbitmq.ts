import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where `rabbitmq-server` and `rabbitmqctl` live (the Debian/Ubuntu package's own scripts by default). */
const SBIN = process.env.ONCEFLOW_RABBITMQ_SBIN ?? '/usr/lib/rabbitmq/bin';

/** Options of `startRabbitMqServer`. */
export interface RabbitMqServerOptions {
  /** The AMQP port (loopback only). Pick one no other test uses; never 5672 (the shared broker). */
  readonly port: number;
  /** The Erlang distribution port. Default `port + 20000`. */
  readonly distPort?: number | undefined;
  /** Longest wait until the node runs the RabbitMQ application, in ms. Default 90 s. */
  readonly readyTimeoutMs?: number | undefined;
}

/**
 * A RabbitMQ node the test owns, never the shared broker on 5672: its own node name, ports and
 * data directory, no plugins. `stopApp()` / `startApp()` restart the broker application (every
 * connection closes; durable queues recover their persistent messages from disk). `await using`
 * halts the node and removes its directory.
 */
export interface RabbitMqServer extends AsyncDisposable {
  readonly port: number;
  /** `amqp://guest:guest@127.0.0.1:<port>` */
  readonly url: string;
  /** Holds its config, database, pid file and logs. */
  readonly dir: string;
  /** Stops the RabbitMQ application (the Erlang node keeps running). */
  stopApp(): Promise<void>;
  /** Starts the application again; resolves once it accepts connections. */
  startApp(): Promise<void>;
}

/** Starts a RabbitMQ node on `options.port`; resolves once it accepts connections. */
export async function startRabbitMqServer(options: RabbitMqServerOptions): Promise<RabbitMqServer> {
  const { port, distPort = port + 20_000, readyTimeoutMs = 90_000 } = options;
  const node = `onceflow-test-${port}@localhost`;
  const dir = mkdtempSync(join(tmpdir(), `onceflow-rabbitmq-${port}-`));
  writeFileSync(join(dir, 'plugins'), '');
  writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.local = 127.0.0.1:${port}\n`);
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'plugins'),
    RABBITMQ_PID_FILE: join(dir, 'pid'),
  };
  const ctl = async (...args: string[]) => {
    await run(join(SBIN, 'rabbitmqctl'), ['-n', node, ...args], { env });
  };
  const halt = async () => {
    await ctl('stop').catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };

  const server = spawn(join(SBIN, 'rabbitmq-server'), [], { env, stdio: 'ignore', detached: true });
  server.unref();
  const seconds = String(Math.ceil(readyTimeoutMs / 1000));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) =>
        reject(new Error(`rabbitmq-server on ${port} could not start: ${err.message}`)),
      );
      server.once('exit', (code) =>
        reject(new Error(`rabbitmq-server on ${port} exited (${code}); see ${dir}/log`)),
      );
      ctl('wait', join(dir, 'pid'), '--timeout', seconds).then(resolve, reject);
    });
  } catch (err) {
    await halt();
    throw err;
  }
  server.removeAllListeners('exit');
  return {
    port,
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    dir,
    stopApp: () => ctl('stop_app'),
    async startApp() {
      await ctl('start_app');
      await ctl('await_startup');
    },
    [Symbol.asyncDispose]: halt,
  };
}
