import { execFile } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where `rabbitmq-server` and `rabbitmqctl` live (the Debian/Ubuntu package's own scripts by default). */
const SBIN = process.env.ONCEFLOW_RABBITMQ_SBIN ?? '/usr/lib/rabbitmq/bin';

/**
 * A RabbitMQ node of this test's own, on its own ports and data directory, with no plugins, so
 * a test can restart a broker without touching the shared one. `stop()` halts the node and
 * removes its directory.
 */
export interface OwnBroker {
  readonly url: string;
  /** Stops the RabbitMQ application (every connection closes, queues stop). */
  stopApp(): Promise<void>;
  /** Starts it again: durable queues recover their persistent messages from disk. */
  startApp(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnBroker(n: number): Promise<OwnBroker> {
  const port = 5673 + n;
  const node = `onceflow-test-${n}@localhost`;
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-rabbit-'));
  writeFileSync(join(dir, 'plugins'), '');
  writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.local = 127.0.0.1:${port}\n`);
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(25673 + n),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'plugins'),
    RABBITMQ_PID_FILE: join(dir, 'pid'),
  };
  const ctl = (...args: string[]) => run(join(SBIN, 'rabbitmqctl'), ['-n', node, ...args], { env });
  const server = spawn(join(SBIN, 'rabbitmq-server'), [], { env, stdio: 'ignore', detached: true });
  server.unref();
  await ctl('wait', join(dir, 'pid'), '--timeout', '90');
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    stopApp: async () => void (await ctl('stop_app')),
    startApp: async () => {
      await ctl('start_app');
      await ctl('await_startup');
    },
    async stop() {
      await ctl('stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
