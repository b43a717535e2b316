// Transport
export { type KafkaTransport, createKafkaTransport } from './transport.js';

// Configuration
export {
  DEFAULT_RETRY_TIERS_MS,
  type KafkaTransportOptions,
  defaultBrokers,
  topicNames,
} from './config.js';

// Topology helpers
export { removeKafkaTopology } from './topology.js';
