import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { ConfigError } from '@onceflow/core';
import { SQS_MAX_MESSAGE_BYTES } from './config.js';
import { asTransport, isNoSuchQueue } from './errors.js';

/** Which queues an onceflow queue name stands for. */
export interface SqsQueueSpec {
  /** Base name, without `.fifo`. */
  readonly queue: string;
  readonly fifo: boolean;
}

/** Names and URLs of a work queue and its dead-letter queue. */
export interface SqsQueues {
  readonly name: string;
  readonly url: string;
  readonly deadLetterName: string;
  readonly deadLetterUrl: string;
}

const FOURTEEN_DAYS_S = 14 * 24 * 3600;

/** `orders.fifo` and `orders-dlq.fifo` (FIFO), or `orders` and `orders-dlq`. */
export function queueNames(spec: SqsQueueSpec): { name: string; deadLetterName: string } {
  const suffix = spec.fifo ? '.fifo' : '';
  return { name: `${spec.queue}${suffix}`, deadLetterName: `${spec.queue}-dlq${suffix}` };
}

async function urlOf(client: SQSClient, name: string): Promise<string | undefined> {
  try {
    return (await client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (err) {
    if (isNoSuchQueue(err)) return undefined;
    throw err;
  }
}

async function attributesOf(client: SQSClient, url: string) {
  const out = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
  );
  return out.Attributes ?? {};
}

/**
 * The attributes that differ from `wanted` (a redrive policy compared by its fields). One the
 * server does not report is not compared (ElasticMQ reports neither `MaximumMessageSize` nor
 * `MessageRetentionPeriod`); a missing redrive policy differs.
 */
function differing(have: Record<string, string>, wanted: Record<string, string>) {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(wanted)) {
    const now = have[name];
    if (now === undefined && name !== 'RedrivePolicy') continue;
    const same =
      name === 'RedrivePolicy' && now !== undefined
        ? sameRedrive(JSON.parse(now), JSON.parse(value))
        : now === value;
    if (!same) out[name] = value;
  }
  return out;
}

const sameRedrive = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  a.deadLetterTargetArn === b.deadLetterTargetArn &&
  String(a.maxReceiveCount) === String(b.maxReceiveCount);

/** Creates `name` with `wanted`, or brings an existing queue's attributes to `wanted`. Returns its URL. */
async function ensureOne(
  client: SQSClient,
  name: string,
  fifo: boolean,
  wanted: Record<string, string>,
  create: boolean,
): Promise<string> {
  const url = await urlOf(client, name);
  if (url === undefined) {
    if (!create) throw new ConfigError(`sqs queue ${name} does not exist (createQueues is false)`);
    const created = await client.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: { ...(fifo ? { FifoQueue: 'true' } : {}), ...wanted },
      }),
    );
    if (!created.QueueUrl) throw new Error(`CreateQueue ${name} returned no URL`);
    return created.QueueUrl;
  }
  const change = differing(await attributesOf(client, url), wanted);
  if (Object.keys(change).length === 0) return url;
  if (!create)
    throw new ConfigError(
      `sqs queue ${name} differs from what onceflow needs: ${JSON.stringify(change)}`,
    );
  await client.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: change }));
  return url;
}

/**
 * Sets up a work queue and its dead-letter queue, idempotently: FIFO with content-based dedupe
 * off (the adapter sends its own deduplication ids), 1 MiB messages, 14 days' retention in the
 * dead-letter queue, and the work queue's redrive policy pointing at it with `maxReceiveCount` =
 * `deliveryLimit` (SQS moves a message there on its own after that many receives).
 * Existing queues have their attributes brought to these values. With `create: false` nothing is
 * changed: a missing queue or a differing attribute throws `ConfigError`. Other failures throw
 * `TransportUnavailableError`.
 *
 * @example
 * const { url } = await ensureSqsQueues(client, { queue: 'orders', fifo: true, deliveryLimit: 20 });
 */
export async function ensureSqsQueues(
  client: SQSClient,
  options: SqsQueueSpec & { readonly deliveryLimit: number; readonly create?: boolean },
): Promise<SqsQueues> {
  const { name, deadLetterName } = queueNames(options);
  const create = options.create ?? true;
  const common: Record<string, string> = {
    MaximumMessageSize: String(SQS_MAX_MESSAGE_BYTES),
    ...(options.fifo ? { ContentBasedDeduplication: 'false' } : {}),
  };
  return asTransport('queue set-up', async () => {
    const deadLetterUrl = await ensureOne(
      client,
      deadLetterName,
      options.fifo,
      { ...common, MessageRetentionPeriod: String(FOURTEEN_DAYS_S) },
      create,
    );
    const arn = (await attributesOf(client, deadLetterUrl)).QueueArn;
    if (!arn) throw new Error(`no QueueArn for ${deadLetterName}`);
    const redrive = JSON.stringify({
      deadLetterTargetArn: arn,
      maxReceiveCount: options.deliveryLimit,
    });
    const url = await ensureOne(
      client,
      name,
      options.fifo,
      { ...common, RedrivePolicy: redrive },
      create,
    );
    return { name, url, deadLetterName, deadLetterUrl };
  });
}

/**
 * Deletes a work queue and its dead-letter queue with every message in them; absent ones are
 * skipped. (SQS refuses to re-create a deleted name for about 60 seconds.)
 *
 * @example
 * await deleteSqsQueues(client, { queue: 'orders-test-1', fifo: true });
 */
export async function deleteSqsQueues(client: SQSClient, spec: SqsQueueSpec): Promise<void> {
  const { name, deadLetterName } = queueNames(spec);
  await asTransport('queue deletion', async () => {
    for (const n of [name, deadLetterName]) {
      const url = await urlOf(client, n);
      if (url !== undefined) await client.send(new DeleteQueueCommand({ QueueUrl: url }));
    }
  });
}
