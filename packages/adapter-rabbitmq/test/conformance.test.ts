import { describeTransportConformance } from '@onceflow/conformance';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '../src/index.js';

// The whole suite against the real broker ($ONCEFLOW_AMQP_URL, else 127.0.0.1:5672): every
// scenario gets its own work queue, deleted with its derived queues afterwards.
describeTransportConformance('rabbitmq', {
  createTransport: async ({ queue, lockMs }) =>
    createRabbitMqTransport({ queue, lockMs, reconnectMaxMs: 1_000 }),
  cleanup: ({ queue }) => deleteRabbitMqQueues({ queue }),
});
