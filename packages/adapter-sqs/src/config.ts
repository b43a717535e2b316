import type { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';
import { silentLogger } from '@onceflow/core';
import { loggerSchema, parseConfig } from '@onceflow/core/kit';
import { z } from 'zod';

/** SQS's own message size limit (body plus message attributes), in bytes. */
export const SQS_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Bytes kept free for the adapter's message attributes (dead-letter reason and error included). */
export const ATTRIBUTE_RESERVE_BYTES = 8 * 1024;
const MAX_ENVELOPE_BYTES = SQS_MAX_MESSAGE_BYTES - ATTRIBUTE_RESERVE_BYTES;

const object = <T>(what: string) =>
  z.custom<T>((v) => typeof v === 'object' && v !== null, `must be ${what}`);

const optionsSchema = z
  .object({
    /**
     * Queue name without the `.fifo` suffix (added for FIFO queues): 1–71 characters of
     * `[A-Za-z0-9_-]`. The dead-letter queue is `<queue>-dlq` (`<queue>-dlq.fifo`).
     */
    queue: z.string().regex(/^[A-Za-z0-9_-]{1,71}$/, 'must be 1-71 characters of [A-Za-z0-9_-]'),
    /** FIFO queue (broker dedupe for 5 minutes, order per key) or a standard queue. Default true. */
    fifo: z.boolean().default(true),
    /** A client you configured and close yourself. Give this or `clientConfig`. */
    client: object<SQSClient>('an SQSClient').optional(),
    /**
     * Or the configuration of a client the transport makes in `start()` and destroys in `close()`:
     * `region`, and `endpoint` only for a local server. Credentials come from the AWS SDK's default
     * provider chain unless given here.
     */
    clientConfig: object<SQSClientConfig>('an SQSClientConfig').optional(),
    /**
     * Create the queues and wire the dead-letter queue in `start()` (idempotent), or only check that
     * they exist and match. Default true.
     */
    createQueues: z.boolean().default(true),
    /**
     * The redrive policy's `maxReceiveCount`: SQS moves a message to the dead-letter queue on its own
     * after this many receives. A backstop for messages whose consumer crashes every time; keep it
     * above the worker's `retry.maxAttempts`. 1–1000, default 10.
     */
    maxReceiveCount: z.number().int().min(1).max(1000).default(10),
    /**
     * Long-polling wait of each receive, in seconds (0–20). `close()` waits for an open poll to end,
     * so this bounds how long closing a consumer takes. Default 10.
     */
    waitTimeSeconds: z.number().int().min(0).max(20).default(10),
    /**
     * Largest encoded envelope `publish` accepts, in bytes (at least 1024). Default and maximum:
     * 1 MiB less 8 KiB kept for message attributes.
     */
    maxMessageBytes: z.number().int().min(1024).max(MAX_ENVELOPE_BYTES).default(MAX_ENVELOPE_BYTES),
    /** How long a dead-letter listing hides the messages it reads, in seconds (1–43200). Default 30. */
    deadLetterScanSeconds: z.number().int().min(1).max(43_200).default(30),
    /** Receives consumer-loop errors (an unreachable endpoint, throttling). Default: silent. */
    logger: loggerSchema.default(() => silentLogger),
  })
  .strict()
  .refine((o) => (o.client === undefined) !== (o.clientConfig === undefined), {
    message: 'give exactly one of client or clientConfig',
    path: ['client'],
  });

/** Options of `createSqsTransport`. Only `queue` and one of `client` / `clientConfig` are required. */
export type SqsTransportOptions = z.input<typeof optionsSchema>;

export type SqsTransportConfig = z.output<typeof optionsSchema>;

/** Validates options and fills defaults, in this one place. Throws `ConfigError` naming every bad field. */
export function parseSqsOptions(options: SqsTransportOptions): SqsTransportConfig {
  return parseConfig('sqs transport options', optionsSchema, options);
}
