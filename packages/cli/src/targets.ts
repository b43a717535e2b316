import type { TargetRegistry } from './target.js';

/**
 * The stores `--store` and `--to` can name, one line each. Each loads its module (and its
 * store's client library) only when named. Programs embedding the CLI pass their own registry
 * to `runCli`, spreading this one to keep these.
 *
 * @example
 * await runCli(argv, { output, targets: { ...defaultTargets, mine: openMine } });
 */
export const defaultTargets: TargetRegistry = {
  embedded: (o) => import('./targets/embedded.js').then((m) => m.openEmbedded(o)),
  rabbitmq: (o) => import('./targets/rabbitmq.js').then((m) => m.openRabbitmq(o)),
  bullmq: (o) => import('./targets/bullmq.js').then((m) => m.openBullmq(o)),
  kafka: (o) => import('./targets/kafka.js').then((m) => m.openKafka(o)),
  sqs: (o) => import('./targets/sqs.js').then((m) => m.openSqs(o)),
  postgres: (o) => import('./targets/postgres.js').then((m) => m.openPostgres(o)),
};
