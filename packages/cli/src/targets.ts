import type { StoreRegistry, TransportRegistry } from './target.js';

/**
 * The record stores `--store` can name, one line each. Each loads its module (and its client
 * library) only when named. Programs embedding the CLI pass their own registry to `runCli`,
 * spreading this one to keep these.
 *
 * @example
 * await runCli(argv, { output, stores: { ...defaultStores, mine: openMine } });
 */
export const defaultStores: StoreRegistry = {
  embedded: (o) => import('./targets/embedded.js').then((m) => m.openEmbeddedStore(o)),
  postgres: (o) => import('./targets/postgres.js').then((m) => m.openPostgres(o)),
  redis: (o) => import('./targets/redis.js').then((m) => m.openRedis(o)),
};

/**
 * The transports `--to` can name, for the commands that publish (redrive and replay with
 * `--apply`). Each loads its adapter only when named.
 *
 * @example
 * await runCli(argv, { output, transports: { ...defaultTransports, nats: openNats } });
 */
export const defaultTransports: TransportRegistry = {
  embedded: (o) => import('./targets/embedded.js').then((m) => m.openEmbeddedTransport(o)),
  sqs: (o) => import('./targets/sqs.js').then((m) => m.openSqs(o)),
  rabbitmq: (o) => import('./targets/rabbitmq.js').then((m) => m.openRabbitmq(o)),
  kafka: (o) => import('./targets/kafka.js').then((m) => m.openKafka(o)),
  bullmq: (o) => import('./targets/bullmq.js').then((m) => m.openBullmq(o)),
};
