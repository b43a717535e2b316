// The services the tests need, how to reach them, and a reachability check.
// Each entry names the service, its loopback address (overridable by env) and how to start it.
import net from 'node:net';

export const services = {
  postgres: {
    url: process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    hint: 'start PostgreSQL (e.g. pg_ctlcluster <version> main start) or set ONCEFLOW_PG_URL',
  },
  redis: {
    url: process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379',
    hint: 'start Redis (redis-server --daemonize yes) or set ONCEFLOW_REDIS_URL',
  },
  rabbitmq: {
    url: process.env.ONCEFLOW_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    hint: 'start RabbitMQ (rabbitmq-server -detached) or set ONCEFLOW_AMQP_URL',
  },
  kafka: {
    url: `kafka://${process.env.ONCEFLOW_KAFKA_BROKERS?.split(',')[0] ?? '127.0.0.1:9092'}`,
    hint: 'run `pnpm brokers:up kafka` or set ONCEFLOW_KAFKA_BROKERS',
  },
  sqs: {
    url: process.env.ONCEFLOW_SQS_ENDPOINT ?? 'http://127.0.0.1:9324',
    hint: 'run `pnpm brokers:up sqs` or set ONCEFLOW_SQS_ENDPOINT',
  },
};

/** Resolves true when a TCP connection to host:port opens within timeoutMs. */
export function reachable(host, port, timeoutMs = 2000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Returns the names of the services that cannot be reached, each with its hint. */
export async function missingServices(names = Object.keys(services)) {
  const missing = [];
  for (const name of names) {
    const { url, hint } = services[name];
    const u = new URL(url);
    const port =
      Number(u.port) ||
      { 'postgres:': 5432, 'redis:': 6379, 'amqp:': 5672, 'kafka:': 9092, 'http:': 80 }[u.protocol];
    if (!(await reachable(u.hostname, port)))
      missing.push(`${name} at ${u.hostname}:${port}: ${hint}`);
  }
  return missing;
}
