import { createSqsTransport, deleteSqsQueues } from '@onceflow/adapter-sqs';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { DEMO_LOCK_MS } from '../lock.js';
import type { Stack, StackOptions } from '../stack.js';
import { openPostgresStores, stackOnPostgres } from './postgres-stores.js';

/**
 * Where the demo's SQS is: `$ONCEFLOW_SQS_ENDPOINT` (default ElasticMQ on 127.0.0.1:9324, with
 * dummy credentials, which a local server ignores). Set it to an empty string to use real AWS:
 * region and credentials then come from the AWS SDK's default chain.
 */
function clientConfig(): SQSClientConfig {
  const endpoint = process.env.ONCEFLOW_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';
  if (endpoint === '') return {};
  return {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'onceflow', secretAccessKey: 'onceflow' },
  };
}

/**
 * SQS FIFO queue `demo-<runId>.fifo` (and its dead-letter queue), with inbox, processed marks and
 * ledger in PostgreSQL. The run's owner deletes both queues on close.
 */
export async function sqsStack(options: StackOptions): Promise<Stack> {
  const stores = await openPostgresStores(options);
  // The demo runs on Node 20: silence the SDK's support notice with its documented switch
  // (aws/aws-sdk-js-v3#7983), in the demo only; a value set by the caller wins.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client = new SQSClient(clientConfig());
  const queue = `demo-${options.runId}`;
  // Two-second long polls: stopping a worker waits for its open poll.
  return stackOnPostgres({
    broker: 'sqs',
    options,
    stores,
    transport: createSqsTransport({ queue, client, waitTimeSeconds: 2, lockMs: DEMO_LOCK_MS }),
    remove: () => deleteSqsQueues(client, { queue, fifo: true }),
    release: async () => client.destroy(),
  });
}
