import { describeTransportConformance } from '@onceflow/conformance';
import { createKafkaTransport, removeKafkaTopology } from '../src/index.js';
import { testOptions } from './brokers.js';

describeTransportConformance('kafka', {
  createTransport: async ({ queue, lockMs }) =>
    createKafkaTransport({ ...testOptions(queue), lockMs }),
  cleanup: ({ queue }) => removeKafkaTopology(testOptions(queue)),
  timeouts: { deliveryMs: 10_000 },
});
