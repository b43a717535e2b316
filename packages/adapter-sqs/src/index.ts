// The transport
export { type SqsTransport, FIFO_DEDUPE_WINDOW_MS, createSqsTransport } from './transport.js';
export type { SqsTransportOptions } from './config.js';
export { SqsPublishError, type SqsUnsentMessage } from './errors.js';

// Queue set-up
export {
  type SqsQueueSpec,
  type SqsQueues,
  deleteSqsQueues,
  ensureSqsQueues,
  queueNames,
} from './queues.js';
