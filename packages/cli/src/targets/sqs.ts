import type { TargetOptions, TransportTarget } from '../target.js';
import { loadPackages, transportTarget } from './broker.js';

/**
 * `--to sqs`: the SQS queue `--queue` (`<queue>.fifo`; `ONCEFLOW_SQS_FIFO=false` for a standard
 * queue). Region and credentials come from the AWS SDK's default chain; `ONCEFLOW_SQS_ENDPOINT`
 * points it at a local server (with placeholder credentials unless AWS ones are set). Refuses a
 * queue that does not exist rather than creating it, and changes no queue attribute: the
 * transport's `deliveryLimit` is read from the queue's redrive policy. Starts no consumer.
 */
export async function openSqs(options: TargetOptions): Promise<TransportTarget> {
  const { adapter, sdk } = await loadPackages(
    '--to sqs',
    '@onceflow/adapter-sqs and @aws-sdk/client-sqs',
    async () => ({
      adapter: await import('@onceflow/adapter-sqs'),
      sdk: await import('@aws-sdk/client-sqs'),
    }),
  );
  const { env } = options;
  const endpoint = env.ONCEFLOW_SQS_ENDPOINT;
  const client = new sdk.SQSClient(
    endpoint
      ? {
          endpoint,
          region: env.AWS_REGION ?? 'us-east-1',
          ...(env.AWS_ACCESS_KEY_ID
            ? {}
            : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
        }
      : {},
  );
  const fifo = env.ONCEFLOW_SQS_FIFO !== 'false';
  try {
    const { name } = adapter.queueNames({ queue: options.queue, fifo });
    const url = await client
      .send(new sdk.GetQueueUrlCommand({ QueueName: name }))
      .then((out) => out.QueueUrl ?? '')
      .catch(() => {
        throw new Error(
          `no SQS queue "${name}" (set --queue or ONCEFLOW_QUEUE, ONCEFLOW_SQS_FIFO)`,
        );
      });
    const attributes = await client.send(
      new sdk.GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['RedrivePolicy'] }),
    );
    const policy = JSON.parse(attributes.Attributes?.RedrivePolicy ?? '{}') as {
      maxReceiveCount?: number | string;
    };
    const transport = adapter.createSqsTransport({
      queue: options.queue,
      fifo,
      client,
      createQueues: false,
      ...(policy.maxReceiveCount === undefined
        ? {}
        : { deliveryLimit: Number(policy.maxReceiveCount) }),
    });
    const target = transportTarget(transport, `SQS queue "${name}"`);
    return {
      ...target,
      close: async () => {
        await target.close();
        client.destroy();
      },
    };
  } catch (err) {
    client.destroy();
    throw err;
  }
}
