import type { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';
import { type Logger, silentLogger } from '@onceflow/core';
import {
  loggerSchema,
  parseConfig,
  publishTimeoutSchema,
  type SameFields,
} from '@onceflow/core/kit';
import { z } from 'zod';

/** SQS's own message size limit (body plus message attributes), in bytes. */
export const SQS_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Bytes kept free for the adapter's message attributes. */
export const ATTRIBUTE_RESERVE_BYTES = 8 * 1024;
const MAX_ENVELOPE_BYTES = SQS_MAX_MESSAGE_BYTES - ATTRIBUTE_RESERVE_BYTES;
/** SQS keeps a received message invisible for at most 12 hours from its receipt. */
export const MAX_VISIBILITY_MS = 12 * 3_600_000;

const object = <T>(what: string) =>
  z.custom<T>((v) => typeof v === 'object' && v !== null, `must be ${what}`);

const optionsSchema = z
  .object({
    queue: z.string().regex(/^[A-Za-z0-9_-]{1,71}$/, 'must be 1-71 characters of [A-Za-z0-9_-]'),
    fifo: z.boolean().default(true),
    client: object<SQSClient>('an SQSClient').optional(),
    clientConfig: object<SQSClientConfig>('an SQSClientConfig').optional(),
    createQueues: z.boolean().default(true),
    lockMs: z.number().int().min(1000).max(MAX_VISIBILITY_MS).default(30_000),
    deliveryLimit: z.number().int().min(1).max(1000).default(20),
    waitTimeSeconds: z.number().int().min(0).max(20).default(10),
    maxMessageBytes: z.number().int().min(1024).max(MAX_ENVELOPE_BYTES).default(MAX_ENVELOPE_BYTES),
    publishTimeoutMs: publishTimeoutSchema,
    logger: loggerSchema.default(() => silentLogger),
  })
  .strict()
  .refine((o) => (o.client === undefined) !== (o.clientConfig === undefined), {
    message: 'give exactly one of client or clientConfig',
    path: ['client'],
  });

/** Options of `createSqsTransport`. Only `queue` and one of `client` / `clientConfig` are required. */
export interface SqsTransportOptions {
  /**
   * Queue name without the `.fifo` suffix (added for FIFO queues): 1–71 characters of
   * `[A-Za-z0-9_-]`. The dead-letter queue is `<queue>-dlq` (`<queue>-dlq.fifo`).
   */
  readonly queue: string;
  /** FIFO queue (broker dedupe for 5 minutes, order per key) or a standard queue. Default true. */
  readonly fifo?: boolean | undefined;
  /** A client you configured and close yourself. Give this or `clientConfig`. */
  readonly client?: SQSClient | undefined;
  /**
   * Or the configuration of a client the transport makes on first use and destroys in `close()`:
   * `region`, and `endpoint` only for a local server. Credentials come from the AWS SDK's default
   * provider chain unless given here.
   */
  readonly clientConfig?: SQSClientConfig | undefined;
  /**
   * Create the queues and wire the dead-letter queue on first use or in `start()` (idempotent),
   * or only check that they exist and match. Default true.
   */
  readonly createQueues?: boolean | undefined;
  /**
   * Each delivery's lock: the visibility timeout every receive asks for (rounded up to whole
   * seconds), and what `renewLock` renews it for (`ChangeMessageVisibility`). Declared as
   * `capabilities.lock.ms`. 1 s (SQS counts whole seconds) to 12 h, default 30 000.
   */
  readonly lockMs?: number | undefined;
  /**
   * The redrive policy's `maxReceiveCount`: after this many receives SQS moves a message to the
   * dead-letter queue on its own, where `consumeDeadLetters` reads it back (a crash loop, a store
   * that was down). Keep it above the worker's `retry.maxAttempts`. 1–1000, default 20.
   */
  readonly deliveryLimit?: number | undefined;
  /**
   * Long-polling wait of each receive, in seconds (0–20). `close()` waits for an open poll to end,
   * so this bounds how long closing a consumer takes. Default 10.
   */
  readonly waitTimeSeconds?: number | undefined;
  /**
   * Largest encoded envelope `publish` accepts, in bytes (at least 1024). Default and maximum:
   * 1 MiB less 8 KiB kept for message attributes.
   */
  readonly maxMessageBytes?: number | undefined;
  /**
   * Longest a `publish` waits for SQS, in ms, queue set-up on first use included: past it, or at
   * once while SQS is known unreachable, it rejects with `TransportUnavailableError` (its
   * requests are aborted) and the receiver answers 503 with `Retry-After`. Default 500.
   */
  readonly publishTimeoutMs?: number | undefined;
  /** Receives consumer-loop errors (an unreachable endpoint, throttling). Default: silent. */
  readonly logger?: Logger | undefined;
}

// A type error the day the schema and the interface above differ.
const _configMatches: SameFields<z.input<typeof optionsSchema>, SqsTransportOptions> = true;

export type SqsTransportConfig = z.output<typeof optionsSchema>;

/** Validates options and fills defaults, in this one place. Throws `ConfigError` naming every bad field. */
export function parseSqsOptions(options: SqsTransportOptions): SqsTransportConfig {
  return parseConfig('sqs transport options', optionsSchema, options);
}
