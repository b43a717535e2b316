import {
  type PostgresStopMode,
  startElasticMqServer,
  startKafkaServer,
  startPostgresServer,
  startRabbitMqServer,
  startRedisServer,
} from '@onceflow/test-servers';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BrokerDefect, defectsSince, elasticMqDefects } from './broker-defects.js';
import type { StackName } from './stack.js';

/** The harness's own broker instance for one stack: never the machine's shared services. */
export interface ChaosBroker extends AsyncDisposable {
  /** What the stack's transport connects to ('' for the embedded stack). */
  readonly url: string;
  /** Whether `restart` does anything. */
  readonly restartable: boolean;
  /** Stops the broker (a crash where the server has one), waits `downMs`, starts it again. */
  restart(downMs: number): Promise<void>;
  /**
   * Where the broker broke its own guarantee since the previous call, from its log (see
   * broker-defects.ts); the first call only marks where the log stands.
   */
  defects(): BrokerDefect[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Ports of the harness's servers: `CHAOS_PORT_BASE` (default 5790) + 0 RabbitMQ, + 1 Redis,
 * + 2/3 Kafka, + 4 ElasticMQ, + 5 PostgreSQL.
 */
const base = () => Number(process.env.CHAOS_PORT_BASE ?? 5790);

export async function startBroker(stack: StackName): Promise<ChaosBroker> {
  switch (stack) {
    case 'embedded':
      return {
        url: '',
        restartable: false,
        restart: async () => {},
        defects: () => [],
        [Symbol.asyncDispose]: async () => {},
      };
    case 'rabbitmq': {
      const server = await startRabbitMqServer({ port: base(), readyTimeoutMs: 180_000 });
      return restartable(
        server,
        server.url,
        () => server.stopApp(),
        () => server.startApp(),
      );
    }
    case 'bullmq': {
      const server = await startRedisServer({ port: base() + 1 });
      return restartable(
        server,
        server.url,
        () => server.kill(),
        () => server.start(),
      );
    }
    case 'kafka': {
      const server = await startKafkaServer({ port: base() + 2, readyTimeoutMs: 240_000 });
      return restartable(
        server,
        server.brokers[0] ?? '',
        () => server.stop({ kill: true }),
        () => server.start(),
      );
    }
    case 'sqs': {
      // ElasticMQ with its messages in an H2 file, so a SIGKILL and a start bring them back.
      const server = await startElasticMqServer({ port: base() + 4, persist: true });
      const log = join(server.dir, `elasticmq-${server.port}.log`);
      const read = () => {
        try {
          return readFileSync(log, 'utf8');
        } catch {
          return '';
        }
      };
      return restartable(
        server,
        server.endpoint,
        () => server.kill(),
        () => server.start(),
        defectsSince(read, elasticMqDefects),
      );
    }
  }
}

/** The harness's own PostgreSQL (`--pg own`), restarted once per run at a point of the seed's. */
export interface ChaosPostgres extends AsyncDisposable {
  readonly url: string;
  /** Stops it (`mode`), waits `downMs`, starts it again (crash recovery included). */
  restart(mode: PostgresStopMode, downMs: number): Promise<void>;
}

export async function startPostgres(): Promise<ChaosPostgres> {
  const server = await startPostgresServer({ port: base() + 5 });
  return {
    url: server.url,
    async restart(mode, downMs) {
      await server.stop(mode);
      await sleep(downMs);
      await server.start();
    },
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

/** A broker the harness restarts by `stop`, a pause of `downMs`, then `start`. */
function restartable(
  server: AsyncDisposable,
  url: string,
  stop: () => Promise<unknown>,
  start: () => Promise<unknown>,
  defects: () => BrokerDefect[] = () => [],
): ChaosBroker {
  return {
    url,
    restartable: true,
    defects,
    async restart(downMs) {
      await stop();
      await sleep(downMs);
      await start();
    },
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}
