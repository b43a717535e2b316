import { z } from 'zod';
import type { Env } from './target.js';

const text = z.string().min(1);

/**
 * The `onceflow.config.*` file: where the record store and the transport are and how to reach
 * them, and defaults for the commands, so a command line needs no target flags. Every field is
 * optional; an unknown key is an error (a misspelt `postgress` never passes silently). Each
 * connection field stands for the flag or environment variable named beside it, and loses to
 * both.
 */
export const configSchema = z.strictObject({
  /** For editors: the JSON schema's URL or path. Ignored. */
  $schema: z.string().optional(),
  /** `--store` / `ONCEFLOW_STORE`: the record store (`embedded`, `postgres`, `redis`, …). */
  store: text.optional(),
  /** `--to` / `ONCEFLOW_TO`: the transport redrive and replay publish through. */
  to: text.optional(),
  /** `--queue` / `ONCEFLOW_QUEUE`: its queue, for Kafka the work topic. */
  queue: text.optional(),
  embedded: z
    .strictObject({
      /** `--db` / `ONCEFLOW_DB`: the SQLite file, relative to the config file's folder. */
      db: text.optional(),
    })
    .optional(),
  postgres: z
    .strictObject({
      /** `--pg-url` / `ONCEFLOW_PG_URL`. */
      url: text.optional(),
      /** `ONCEFLOW_PG_SCHEMA`. */
      schema: text.optional(),
      /** `ONCEFLOW_PG_TABLE`. */
      table: text.optional(),
    })
    .optional(),
  redis: z
    .strictObject({
      /** `ONCEFLOW_REDIS_URL`: the Redis store, and the BullMQ transport's server. */
      url: text.optional(),
      /** `ONCEFLOW_REDIS_PREFIX`: the Redis store's key prefix. */
      prefix: text.optional(),
    })
    .optional(),
  sqs: z
    .strictObject({
      /** `ONCEFLOW_SQS_ENDPOINT`: a local server; unset for AWS. */
      endpoint: z.url().optional(),
      /** `AWS_REGION`. */
      region: text.optional(),
      /** `ONCEFLOW_SQS_FIFO`: false for a standard queue. Default true. */
      fifo: z.boolean().optional(),
    })
    .optional(),
  rabbitmq: z
    .strictObject({
      /** `ONCEFLOW_AMQP_URL`. */
      url: text.optional(),
    })
    .optional(),
  kafka: z
    .strictObject({
      /** `ONCEFLOW_KAFKA_BROKERS`: `host:port` each. */
      brokers: z.array(text).min(1).optional(),
    })
    .optional(),
  bullmq: z
    .strictObject({
      /** `ONCEFLOW_BULLMQ_PREFIX`. */
      prefix: text.optional(),
    })
    .optional(),
  defaults: z
    .strictObject({
      /** `--actor` of redrive and purge. Default `cli:<os user>`. */
      actor: z
        .string()
        .min(1)
        .max(200)
        .regex(/^\P{Cc}*$/u, 'no control characters')
        .optional(),
      /** `--rate` of redrive, purge and replay: most a second. Default: as fast as it goes. */
      rate: z.number().positive().optional(),
    })
    .optional(),
});

/**
 * What an `onceflow.config.json`, `.mjs`, `.js` or `.ts` file holds (see `configSchema`).
 *
 * @example
 * // onceflow.config.mjs
 * // @ts-check
 * import { defineConfig } from '@onceflow/cli';
 * export default defineConfig({ store: 'postgres', postgres: { url: 'postgres://…/app' } });
 */
export type OnceflowConfig = z.input<typeof configSchema>;

/**
 * Returns `config` unchanged: it only gives a `.mjs` or `.ts` config file its type.
 *
 * @example
 * export default defineConfig({ store: 'redis', redis: { url: 'redis://cache:6379' }, to: 'bullmq' });
 */
export function defineConfig(config: OnceflowConfig): OnceflowConfig {
  return config;
}

/** Each connection field of the file and the variable it stands for. */
const VARIABLES: readonly (readonly [
  variable: string,
  value: (c: OnceflowConfig) => string | undefined,
])[] = [
  ['ONCEFLOW_STORE', (c) => c.store],
  ['ONCEFLOW_TO', (c) => c.to],
  ['ONCEFLOW_QUEUE', (c) => c.queue],
  ['ONCEFLOW_DB', (c) => c.embedded?.db],
  ['ONCEFLOW_PG_URL', (c) => c.postgres?.url],
  ['ONCEFLOW_PG_SCHEMA', (c) => c.postgres?.schema],
  ['ONCEFLOW_PG_TABLE', (c) => c.postgres?.table],
  ['ONCEFLOW_REDIS_URL', (c) => c.redis?.url],
  ['ONCEFLOW_REDIS_PREFIX', (c) => c.redis?.prefix],
  ['ONCEFLOW_SQS_ENDPOINT', (c) => c.sqs?.endpoint],
  ['AWS_REGION', (c) => c.sqs?.region],
  ['ONCEFLOW_SQS_FIFO', (c) => (c.sqs?.fifo === undefined ? undefined : String(c.sqs.fifo))],
  ['ONCEFLOW_AMQP_URL', (c) => c.rabbitmq?.url],
  ['ONCEFLOW_KAFKA_BROKERS', (c) => c.kafka?.brokers?.join(',')],
  ['ONCEFLOW_BULLMQ_PREFIX', (c) => c.bullmq?.prefix],
];

/**
 * The environment a command sees: the file's connection settings under the variables they stand
 * for, each overridden by the variable when it is set (flags then win over both).
 */
export function withConfig(env: Env, config: OnceflowConfig): Env {
  const merged: Record<string, string | undefined> = {};
  for (const [variable, value] of VARIABLES) {
    const fromFile = value(config);
    if (fromFile !== undefined) merged[variable] = fromFile;
  }
  for (const [k, v] of Object.entries(env)) if (v !== undefined) merged[k] = v;
  return merged;
}
