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
  $schema: z.string().optional().describe("For editors: the JSON schema's URL or path. Ignored."),
  store: text
    .optional()
    .describe(
      '`--store` / `ONCEFLOW_STORE`: the record store (`embedded`, `postgres`, `redis`, …).',
    ),
  to: text
    .optional()
    .describe('`--to` / `ONCEFLOW_TO`: the transport redrive and replay publish through.'),
  queue: text
    .optional()
    .describe('`--queue` / `ONCEFLOW_QUEUE`: its queue, for Kafka the work topic.'),
  embedded: z
    .strictObject({
      db: text
        .optional()
        .describe("`--db` / `ONCEFLOW_DB`: the SQLite file, relative to the config file's folder."),
    })
    .optional(),
  postgres: z
    .strictObject({
      url: text.optional().describe('`--pg-url` / `ONCEFLOW_PG_URL`.'),
      schema: text.optional().describe('`ONCEFLOW_PG_SCHEMA`.'),
      table: text.optional().describe('`ONCEFLOW_PG_TABLE`.'),
    })
    .optional(),
  redis: z
    .strictObject({
      url: text
        .optional()
        .describe("`ONCEFLOW_REDIS_URL`: the Redis store, and the BullMQ transport's server."),
      prefix: text.optional().describe("`ONCEFLOW_REDIS_PREFIX`: the Redis store's key prefix."),
    })
    .optional(),
  sqs: z
    .strictObject({
      endpoint: z
        .url()
        .optional()
        .describe('`ONCEFLOW_SQS_ENDPOINT`: a local server; unset for AWS.'),
      region: text.optional().describe('`AWS_REGION`.'),
      fifo: z
        .boolean()
        .optional()
        .describe('`ONCEFLOW_SQS_FIFO`: false for a standard queue. Default true.'),
    })
    .optional(),
  rabbitmq: z
    .strictObject({
      url: text.optional().describe('`ONCEFLOW_AMQP_URL`.'),
    })
    .optional(),
  kafka: z
    .strictObject({
      brokers: z
        .array(text)
        .min(1)
        .optional()
        .describe('`ONCEFLOW_KAFKA_BROKERS`: `host:port` each.'),
    })
    .optional(),
  bullmq: z
    .strictObject({
      prefix: text.optional().describe('`ONCEFLOW_BULLMQ_PREFIX`.'),
    })
    .optional(),
  console: z
    .strictObject({
      port: z
        .number()
        .int()
        .min(1)
        .max(65535)
        .optional()
        .describe('`--port` / `ONCEFLOW_CONSOLE_PORT` of `onceflow console`. Default 8088.'),
      host: text
        .optional()
        .describe(
          '`--host` / `ONCEFLOW_CONSOLE_HOST`: the address it listens on. Default 127.0.0.1.',
        ),
      basePath: text
        .optional()
        .describe(
          '`--base-path` / `ONCEFLOW_CONSOLE_BASE_PATH`: the path it answers under. Default /.',
        ),
      write: z
        .boolean()
        .optional()
        .describe(
          '`--write` / `ONCEFLOW_CONSOLE_WRITE`: allow redrive and purge. Default false (read-only). The token is never read from this file: `ONCEFLOW_CONSOLE_TOKEN`.',
        ),
    })
    .optional(),
  defaults: z
    .strictObject({
      actor: z
        .string()
        .min(1)
        .max(200)
        .regex(/^\P{Cc}*$/u, 'no control characters')
        .optional()
        .describe('`--actor` of redrive and purge. Default `cli:<os user>`.'),
      rate: z
        .number()
        .positive()
        .optional()
        .describe(
          '`--rate` of redrive, purge and replay: most a second. Default: as fast as it goes.',
        ),
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
 * The config file's JSON Schema (draft 2020-12), for editors: `onceflow config --schema` prints
 * it, and a JSON file's `"$schema"` can point at it.
 */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: 'input' }) as Record<string, unknown>;
}

/**
 * Returns `config` unchanged: it only gives a `.mjs` or `.ts` config file its type.
 *
 * @example
 * export default defineConfig({ store: 'redis', redis: { url: 'redis://cache:6379' }, to: 'bullmq' });
 */
export function defineConfig(config: OnceflowConfig): OnceflowConfig {
  return config;
}

/** One setting of the file: its field, and the flag and variable it stands for. */
export interface Setting {
  readonly field: string;
  readonly variable?: string | undefined;
  readonly flag?: 'store' | 'to' | 'queue' | 'db' | 'pg-url' | 'actor' | 'rate' | undefined;
  readonly value: (c: OnceflowConfig) => string | number | undefined;
}

/** Every setting of the file, in the order `onceflow config` prints them. */
export const SETTINGS: readonly Setting[] = [
  { field: 'store', flag: 'store', variable: 'ONCEFLOW_STORE', value: (c) => c.store },
  { field: 'to', flag: 'to', variable: 'ONCEFLOW_TO', value: (c) => c.to },
  { field: 'queue', flag: 'queue', variable: 'ONCEFLOW_QUEUE', value: (c) => c.queue },
  { field: 'embedded.db', flag: 'db', variable: 'ONCEFLOW_DB', value: (c) => c.embedded?.db },
  {
    field: 'postgres.url',
    flag: 'pg-url',
    variable: 'ONCEFLOW_PG_URL',
    value: (c) => c.postgres?.url,
  },
  { field: 'postgres.schema', variable: 'ONCEFLOW_PG_SCHEMA', value: (c) => c.postgres?.schema },
  { field: 'postgres.table', variable: 'ONCEFLOW_PG_TABLE', value: (c) => c.postgres?.table },
  { field: 'redis.url', variable: 'ONCEFLOW_REDIS_URL', value: (c) => c.redis?.url },
  { field: 'redis.prefix', variable: 'ONCEFLOW_REDIS_PREFIX', value: (c) => c.redis?.prefix },
  { field: 'sqs.endpoint', variable: 'ONCEFLOW_SQS_ENDPOINT', value: (c) => c.sqs?.endpoint },
  { field: 'sqs.region', variable: 'AWS_REGION', value: (c) => c.sqs?.region },
  {
    field: 'sqs.fifo',
    variable: 'ONCEFLOW_SQS_FIFO',
    value: (c) => (c.sqs?.fifo === undefined ? undefined : String(c.sqs.fifo)),
  },
  { field: 'rabbitmq.url', variable: 'ONCEFLOW_AMQP_URL', value: (c) => c.rabbitmq?.url },
  {
    field: 'kafka.brokers',
    variable: 'ONCEFLOW_KAFKA_BROKERS',
    value: (c) => c.kafka?.brokers?.join(','),
  },
  { field: 'bullmq.prefix', variable: 'ONCEFLOW_BULLMQ_PREFIX', value: (c) => c.bullmq?.prefix },
  { field: 'console.port', variable: 'ONCEFLOW_CONSOLE_PORT', value: (c) => c.console?.port },
  { field: 'console.host', variable: 'ONCEFLOW_CONSOLE_HOST', value: (c) => c.console?.host },
  {
    field: 'console.basePath',
    variable: 'ONCEFLOW_CONSOLE_BASE_PATH',
    value: (c) => c.console?.basePath,
  },
  {
    field: 'console.write',
    variable: 'ONCEFLOW_CONSOLE_WRITE',
    value: (c) => (c.console?.write === undefined ? undefined : String(c.console.write)),
  },
  { field: 'defaults.actor', flag: 'actor', value: (c) => c.defaults?.actor },
  { field: 'defaults.rate', flag: 'rate', value: (c) => c.defaults?.rate },
];

/**
 * The environment a command sees: the file's connection settings under the variables they stand
 * for, each overridden by the variable when it is set (flags then win over both).
 */
export function withConfig(env: Env, config: OnceflowConfig): Env {
  const merged: Record<string, string | undefined> = {};
  for (const { variable, value } of SETTINGS) {
    const fromFile = value(config);
    if (variable !== undefined && fromFile !== undefined) merged[variable] = String(fromFile);
  }
  for (const [k, v] of Object.entries(env)) if (v !== undefined) merged[k] = v;
  return merged;
}
