import type { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';
import { ConfigError, type Logger, silentLogger } from '@onceflow/core';

/** SQS's own message size limit (body plus message attributes), in bytes. */
export const SQS_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Bytes kept free for the adapter's message attributes (dead-letter reason and error included). */
export const ATTRIBUTE_RESERVE_BYTES = 8 * 1024;

/** Options of `createSqsTransport`. Only `queue` and one of `client` / `clientConfig` are required. */
export interface SqsTransportOptions {
  /**
   * Queue name without the `.fifo` suffix (added for FIFO queues): 1–71 characters of
   * `[A-Za-z0-9_-]`. The dead-letter queue is `<queue>-dlq` (`<queue>-dlq.fifo`).
   */
  readonly queue: string;
  /** FIFO queue (broker dedupe for 5 minutes, order per key) or a standard queue. Default true. */
  readonly fifo?: boolean | undefined;
  /** A client you configured and close yourself. */
  readonly client?: SQSClient | undefined;
  /**
   * Or the configuration of a client the transport makes in `start()` and destroys in `close()`:
   * `region`, and `endpoint` only for a local server. Credentials come from the AWS SDK's default
   * provider chain unless given here.
   */
  readonly clientConfig?: SQSClientConfig | undefined;
  /**
   * Create the queues and wire the dead-letter queue in `start()` (idempotent), or only check that
   * they exist and match. Default true.
   */
  readonly createQueues?: boolean | undefined;
  /**
   * The redrive policy's `maxReceiveCount`: SQS moves a message to the dead-letter queue on its own
   * after this many receives. A backstop for messages whose consumer crashes every time; keep it
   * above the worker's `retry.maxAttempts`. Default 10.
   */
  readonly maxReceiveCount?: number | undefined;
  /**
   * Long-polling wait of each receive, in seconds (0–20). `close()` waits for an open poll to end,
   * so this bounds how long closing a consumer takes. Default 10.
   */
  readonly waitTimeSeconds?: number | undefined;
  /**
   * Largest encoded envelope `publish` accepts, in bytes. Default and maximum: 1 MiB less 8 KiB
   * kept for message attributes.
   */
  readonly maxMessageBytes?: number | undefined;
  /** How long a dead-letter listing hides the messages it reads, in seconds. Default 30. */
  readonly deadLetterScanSeconds?: number | undefined;
  /** Receives consumer-loop errors (an unreachable endpoint, throttling). Default: silent. */
  readonly logger?: Logger | undefined;
}

export interface SqsTransportConfig {
  readonly queue: string;
  readonly fifo: boolean;
  readonly client: SQSClient | undefined;
  readonly clientConfig: SQSClientConfig | undefined;
  readonly createQueues: boolean;
  readonly maxReceiveCount: number;
  readonly waitTimeSeconds: number;
  readonly maxMessageBytes: number;
  readonly deadLetterScanSeconds: number;
  readonly logger: Logger;
}

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,71}$/;

function integer(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
) {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max)
    throw new ConfigError(
      `invalid sqs transport options: ${name} must be an integer in ${min}..${max}, got ${v}`,
    );
  return v;
}

/** Validates `createSqsTransport` options and fills defaults. Throws `ConfigError`. */
export function parseSqsOptions(options: SqsTransportOptions): SqsTransportConfig {
  if (typeof options.queue !== 'string' || !QUEUE_NAME.test(options.queue))
    throw new ConfigError(
      `invalid sqs transport options: queue must be 1-71 characters of [A-Za-z0-9_-], got ${JSON.stringify(options.queue)}`,
    );
  if ((options.client === undefined) === (options.clientConfig === undefined))
    throw new ConfigError(
      'invalid sqs transport options: give exactly one of client or clientConfig',
    );
  return {
    queue: options.queue,
    fifo: options.fifo ?? true,
    client: options.client,
    clientConfig: options.clientConfig,
    createQueues: options.createQueues ?? true,
    maxReceiveCount: integer('maxReceiveCount', options.maxReceiveCount, 10, 1, 1000),
    waitTimeSeconds: integer('waitTimeSeconds', options.waitTimeSeconds, 10, 0, 20),
    maxMessageBytes: integer(
      'maxMessageBytes',
      options.maxMessageBytes,
      SQS_MAX_MESSAGE_BYTES - ATTRIBUTE_RESERVE_BYTES,
      1024,
      SQS_MAX_MESSAGE_BYTES - ATTRIBUTE_RESERVE_BYTES,
    ),
    deadLetterScanSeconds: integer(
      'deadLetterScanSeconds',
      options.deadLetterScanSeconds,
      30,
      1,
      43_200,
    ),
    logger: options.logger ?? silentLogger,
  };
}
