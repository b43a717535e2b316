// Redis: a redis-server of the test's own (AOF, own port and data dir), killed and restarted at will
export { type RedisServer, type RedisServerOptions, startRedisServer } from './redis.js';
// Kafka: a single-node KRaft broker of the test's own (own ports and data dir), stopped and restarted at will
export { type KafkaServer, type KafkaServerOptions, startKafkaServer } from './kafka.js';
// RabbitMQ: a node of the test's own (own ports, data dir, no plugins), its application stopped and started at will
export {
  type RabbitMqServer,
  type RabbitMqServerOptions,
  startRabbitMqServer,
} from './rabbitmq.js';
// ElasticMQ: an SQS server of the test's own (own port, H2 persistence), SIGKILLed and restarted at will
export {
  type ElasticMqServer,
  type ElasticMqServerOptions,
  startElasticMqServer,
} from './elasticmq.js';
// PostgreSQL: a cluster of the test's own (initdb, own port), stopped (fast, immediate, SIGKILL) and restarted at will
export {
  type PostgresServer,
  type PostgresServerOptions,
  type PostgresStopMode,
  startPostgresServer,
} from './postgres.js';
