// The transport
export { createRabbitMqTransport, type RabbitMqTransport } from './transport.js';
export {
  DEFAULT_RETRY_DELAYS_MS,
  type RabbitMqTransportOptions,
  defaultAmqpUrl,
} from './config.js';

// Topology
export { type QueueNames, queueNames } from './topology.js';
export { deleteRabbitMqQueues } from './delete-queues.js';
