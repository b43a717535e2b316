import { describeTransportConformance } from '@onceflow/conformance';
import { createBullmqTransport, deleteBullmqQueue } from '../src/index.js';
import { redisUrl, runPrefix } from './helpers.js';

const url = redisUrl();
const prefix = runPrefix();

describeTransportConformance('bullmq', {
  // Each call is a new transport with its own connections, as another process would open it.
  createTransport: async ({ queue, lockMs }) =>
    createBullmqTransport({ url, prefix, queue, lockMs, stalledIntervalMs: 200 }),
  cleanup: ({ queue }) => deleteBullmqQueue({ url, prefix, queue }),
  timeouts: { lockMs: 500 },
});
