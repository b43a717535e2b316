import { describeTransportConformance } from '@onceflow/conformance';
import { afterAll } from 'vitest';
import { deleteSqsQueues } from '../src/index.js';
import { assertSqsAnswers, testClient, testTransport } from './sqs.js';

const client = testClient();
await assertSqsAnswers(client);
afterAll(() => client.destroy());

// SQS visibility timeouts and delays are whole seconds: the lock scenarios use 1 s.
const timeouts = { lockMs: 1000, retryDelayMs: 1000 };

for (const fifo of [true, false]) {
  describeTransportConformance(fifo ? 'sqs' : 'sqs-standard', {
    createTransport: async ({ queue, lockMs }) => testTransport(client, { queue, fifo, lockMs }),
    cleanup: ({ queue }) => deleteSqsQueues(client, { queue, fifo }),
    timeouts,
  });
}
