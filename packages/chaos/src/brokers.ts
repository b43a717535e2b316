import { startKafkaServer, startRabbitMqServer, startRedisServer } from '@onceflow/test-servers';
import type { StackName } from './stack.js';

/** The harness's own broker instance for one stack: never the machine's shared services. */
export interface ChaosBroker extends AsyncDisposable {
  /** What the stack's transport connects to ('' for the embedded stack). */
  readonly url: string;
  /** Whether `restart` does anything. */
  readonly restartable: boolean;
  /** Stops the broker (a crash where the server has one), waits `downMs`, starts it again. */
  restart(downMs: number): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ports of the harness's brokers: `CHAOS_PORT_BASE` (default 5790) + 0 RabbitMQ, + 1 Redis, + 2/3 Kafka. */
const base = () => Number(process.env.CHAOS_PORT_BASE ?? 5790);

export async function startBroker(stack: StackName): Promise<ChaosBroker> {
  switch (stack) {
    case 'embedded':
      return {
        url: '',
        restartable: false,
        restart: async () => {},
        [Symbol.asyncDispose]: async () => {},
      };
    case 'rabbitmq': {
      const server = await startRabbitMqServer({ port: base(), readyTimeoutMs: 180_000 });
      return {
        url: server.url,
        restartable: true,
        async restart(downMs) {
          await server.stopApp();
          await sleep(downMs);
          await server.startApp();
        },
        [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
      };
    }
    case 'bullmq': {
      const server = await startRedisServer({ port: base() + 1 });
      return {
        url: server.url,
        restartable: true,
        async restart(downMs) {
          await server.kill();
          await sleep(downMs);
          await server.start();
        },
        [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
      };
    }
    case 'kafka': {
      const server = await startKafkaServer({ port: base() + 2, readyTimeoutMs: 240_000 });
      return {
        url: server.brokers[0] ?? '',
        restartable: true,
        async restart(downMs) {
          await server.stop({ kill: true });
          await sleep(downMs);
          await server.start();
        },
        [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
      };
    }
  }
}
