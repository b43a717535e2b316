import { randomBytes } from 'node:crypto';
import {
  createRabbitMqTransport,
  defaultAmqpUrl,
  deleteRabbitMqQueues,
} from '@onceflow/adapter-rabbitmq';
import { describeBrokerDeadLetters } from './broker-dead-letters.js';

// The shared RabbitMQ; a queue of this run's own, deleted afterwards.
const url = process.env.ONCEFLOW_AMQP_URL ?? defaultAmqpUrl();
const queue = `onceflow-cli-${randomBytes(4).toString('hex')}`;

describeBrokerDeadLetters({
  store: 'rabbitmq',
  queue,
  env: { ONCEFLOW_AMQP_URL: url },
  transport: createRabbitMqTransport({ url, queue }),
  cleanup: () => deleteRabbitMqQueues({ url, queue }),
  missingMessage: (q) => `no RabbitMQ queue "${q}"`,
});
