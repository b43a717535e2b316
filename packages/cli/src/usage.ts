import type { CommandName } from './args.js';
import { COMMAND_HELP, EXIT_CODES, synopsisOf } from './command-help.js';

/**
 * The `--help` text. The stores and variables are those `defaultTargets` opens and reads (a test
 * checks both against the source).
 */
export const USAGE = `onceflow: operator commands for an onceflow pipeline

Usage:
${(Object.keys(COMMAND_HELP) as CommandName[]).map(synopsisOf).join('\n')}
  onceflow <command> --help
  onceflow --version

Run "onceflow <command> --help" (or "onceflow dead-letters --help") for what a command does.

Every command that changes something is a DRY RUN unless --apply is given:
it prints how many items it would touch, and which, and changes nothing.

Target (flags win over environment variables):
  --store NAME     one of the stores below (default embedded); env ONCEFLOW_STORE
  --db PATH        embedded SQLite file (default .onceflow/onceflow.db); env ONCEFLOW_DB
  --queue NAME     the queue, for Kafka the work topic (default events); env ONCEFLOW_QUEUE
  --pg-url URL     PostgreSQL connection string for --store postgres; env ONCEFLOW_PG_URL
  --to NAME        replay: publish through this store's transport (default: --store)

Stores, what they offer, and the environment variables they read:
  embedded   inbox, dead letters, transport: the SQLite file at --db (never created)
  postgres   inbox only: --pg-url, ONCEFLOW_PG_SCHEMA (default public), ONCEFLOW_PG_TABLE
             (default onceflow_inbox); never migrates
  sqs        dead letters, transport: region and credentials from the AWS SDK's default chain;
             ONCEFLOW_SQS_ENDPOINT for a local server (then AWS_REGION, default us-east-1, and
             placeholder credentials unless AWS_ACCESS_KEY_ID is set); the queue <queue>.fifo,
             or <queue> with ONCEFLOW_SQS_FIFO=false
  rabbitmq   dead letters, transport: ONCEFLOW_AMQP_URL
             (default amqp://guest:guest@127.0.0.1:5672)
  kafka      dead letters (the topic <queue>.dlq), transport: ONCEFLOW_KAFKA_BROKERS,
             comma-separated (default 127.0.0.1:9092)
  bullmq     dead letters, transport: ONCEFLOW_REDIS_URL (default redis://127.0.0.1:6379),
             ONCEFLOW_BULLMQ_PREFIX (default onceflow)
Every store but embedded needs its packages installed beside the CLI: @onceflow/inbox-postgres
and pg; @onceflow/adapter-sqs and @aws-sdk/client-sqs; @onceflow/adapter-rabbitmq and amqplib;
@onceflow/adapter-kafka and kafkajs; @onceflow/adapter-bullmq, bullmq and ioredis. A broker queue
that does not exist is refused, never created (BullMQ's exist implicitly: an unknown one lists
no dead letters).

Replay copies carry the id "<id>#replay-<replay-id>" and the header x-onceflow-replay-of,
so workers process them again on purpose. Reuse --replay-id to resume a replay that stopped.

Durations: 45s, 15m, 12h, 30d, 2w, 1d12h. Dates: ISO-8601, UTC unless a zone is given.

${EXIT_CODES}`;
