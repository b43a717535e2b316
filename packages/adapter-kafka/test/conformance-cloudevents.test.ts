import { describeTransportConformance } from '@onceflow/conformance';
import { createKafkaTransport, removeKafkaTopology } from '../src/index.js';
import { testOptions } from './brokers.js';

// The whole suite again with records in CloudEvents binary mode: the format changes the bytes
// on the broker, never a promise of the transport.
describeTransportConformance('kafka (cloudevents-binary)', {
  createTransport: async ({ queue, lockMs }) =>
    createKafkaTransport({ ...testOptions(queue), lockMs, wireFormat: 'cloudevents-binary' }),
  cleanup: ({ queue }) => removeKafkaTopology(testOptions(queue)),
  timeouts: { deliveryMs: 10_000 },
});
