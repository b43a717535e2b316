import { COMMAND_HELP, synopsisOf } from './command-help.js';
import { EXIT_CODES } from './exit-codes.js';
import type { CommandName } from './flags.js';

/**
 * The `--help` text. The stores, transports and variables are those `defaultStores` and
 * `defaultTransports` open and read (a test checks both against the source).
 */
export const USAGE = `onceflow: operator commands for an onceflow pipeline

Usage:
${(Object.keys(COMMAND_HELP) as CommandName[]).map(synopsisOf).join('\n')}
  onceflow <command> --help
  onceflow --version

Run "onceflow <command> --help" (or "onceflow dead-letters --help") for what a command does.

Every command that changes something is a DRY RUN unless --apply is given:
it prints how many items it would touch, which, and what would happen, and changes nothing.
--json prints one JSON document on stdout instead, on every command (--version too); the
progress of redrive, purge and replay then goes to stderr as NDJSON, one object a line.
Colours only on a terminal: NO_COLOR turns them off, FORCE_COLOR (not 0) on; TERM=dumb off.

Config file: onceflow.config.json, .mjs, .js or .ts in the working directory, or the file
--config FILE (env ONCEFLOW_CONFIG) names; .mjs/.js/.ts export it as default. It holds
store, to, queue, embedded.db, postgres.url/schema/table, redis.url/prefix,
sqs.endpoint/region/fifo, rabbitmq.url, kafka.brokers, bullmq.prefix,
console.port/host/basePath/write and defaults.actor/rate. Each stands for the flag or variable of the same meaning and loses to
both; an unknown or malformed field is refused (exit 2). A .ts file needs a Node that
imports TypeScript (22.18 and later, or NODE_OPTIONS=--import=tsx). "onceflow config" prints
each setting and where it comes from.

Where (flags win over environment variables, which win over the config file):
  --config FILE    the config file (default: onceflow.config.* in the working directory)
  --store NAME     the record store: one of the stores below (default embedded);
                   env ONCEFLOW_STORE
  --db PATH        embedded SQLite file (default .onceflow/onceflow.db); env ONCEFLOW_DB
  --pg-url URL     PostgreSQL connection string for --store postgres; env ONCEFLOW_PG_URL
  --to NAME        redrive and replay --apply: the transport below to publish through;
                   env ONCEFLOW_TO (default embedded when --store is embedded, else required)
  --queue NAME     its queue, for Kafka the work topic (default events); env ONCEFLOW_QUEUE

Stores (--store): the event record every command reads, and what else they offer:
  embedded   record, inbox, stored envelopes: the SQLite file at --db (never created)
  postgres   record, inbox, stored envelopes: --pg-url, ONCEFLOW_PG_SCHEMA (default public),
             ONCEFLOW_PG_TABLE (default onceflow_inbox); never migrates (run migrate())
  redis      record, inbox (no stored envelopes, so no replay): ONCEFLOW_REDIS_URL
             (default redis://127.0.0.1:6379), ONCEFLOW_REDIS_PREFIX (default onceflow:inbox);
             keys exist implicitly: an unknown prefix holds no records

Transports (--to), opened only to publish:
  embedded   the queue --queue in the SQLite file at --db (never created)
  sqs        region and credentials from the AWS SDK's default chain; ONCEFLOW_SQS_ENDPOINT
             for a local server (then AWS_REGION, default us-east-1, and placeholder
             credentials unless AWS_ACCESS_KEY_ID is set); the queue <queue>.fifo, or <queue>
             with ONCEFLOW_SQS_FIFO=false
  rabbitmq   ONCEFLOW_AMQP_URL (default amqp://guest:guest@127.0.0.1:5672)
  kafka      ONCEFLOW_KAFKA_BROKERS, comma-separated (default 127.0.0.1:9092)
  bullmq     ONCEFLOW_REDIS_URL (default redis://127.0.0.1:6379), ONCEFLOW_BULLMQ_PREFIX
             (default onceflow); queues exist implicitly: a misspelt one is not refused
A queue or topic that does not exist is refused, never created. Every store and transport but
embedded needs its packages installed beside the CLI: @onceflow/inbox-postgres and pg;
@onceflow/inbox-redis and ioredis; @onceflow/adapter-sqs and @aws-sdk/client-sqs;
@onceflow/adapter-rabbitmq and amqplib; @onceflow/adapter-kafka and kafkajs;
@onceflow/adapter-bullmq, bullmq and ioredis.

Redrive and purge record who acted (--actor, default cli:<os user>) in each record's history;
--rate caps redrive, purge and replay, each printing progress (count, rate, ETA) on stderr.
Replay copies carry the id "<id>#replay-<replay-id>" and the header x-onceflow-replay-of,
so workers process them again on purpose. Reuse --replay-id to resume a replay that stopped.

The console ("onceflow console") signs in with ONCEFLOW_CONSOLE_TOKEN, and reads
ONCEFLOW_CONSOLE_PORT, ONCEFLOW_CONSOLE_HOST, ONCEFLOW_CONSOLE_BASE_PATH and
ONCEFLOW_CONSOLE_WRITE (true/false) below its flags.

Durations: 45s, 15m, 12h, 30d, 2w, 1d12h. Dates: ISO-8601, UTC unless a zone is given;
replay's --since and --until also take a duration ago (--since 2h).

${EXIT_CODES}`;
