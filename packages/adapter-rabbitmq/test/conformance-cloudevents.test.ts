import { describeTransportConformance } from '@onceflow/conformance';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '../src/index.js';

// The whole suite again with messages in CloudEvents binary mode: the format changes the bytes
// on the broker, never a promise of the transport.
describeTransportConformance('rabbitmq (cloudevents-binary)', {
  createTransport: async ({ queue, lockMs }) =>
    createRabbitMqTransport({
      queue,
      lockMs,
      reconnectMaxMs: 1_000,
      wireFormat: 'cloudevents-binary',
    }),
  cleanup: ({ queue }) => deleteRabbitMqQueues({ queue }),
});
