import { faultSample } from './sample.js';

// A RabbitMQ node of the harness's own (stop_app / start_app), PostgreSQL inbox.
faultSample({ stack: 'rabbitmq', seed: 4243, events: 80, timeoutMs: 420_000 });
