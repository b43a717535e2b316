import { randomBytes } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsTransport, deleteSqsQueues } from '@onceflow/adapter-sqs';
import { describeBrokerDeadLetters } from './broker-dead-letters.js';

// The AWS SDK's documented switch for its Node 20 support notice (aws/aws-sdk-js-v3#7983): tests only.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// ElasticMQ from `node scripts/brokers.mjs up sqs`; FIFO queues of this run's own, deleted afterwards.
const endpoint = process.env.ONCEFLOW_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';
const queue = `onceflow-cli-${randomBytes(4).toString('hex')}`;
const client = new SQSClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

describeBrokerDeadLetters({
  store: 'sqs',
  queue,
  env: { ONCEFLOW_SQS_ENDPOINT: endpoint },
  transport: createSqsTransport({ queue, waitTimeSeconds: 1, client }),
  cleanup: async () => {
    await deleteSqsQueues(client, { queue, fifo: true });
    client.destroy();
  },
  missingMessage: (q) => `no SQS queue "${q}.fifo"`,
});
