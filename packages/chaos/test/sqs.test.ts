import { faultSample } from './sample.js';

// A FIFO queue on an ElasticMQ of the harness's own with H2 persistence (SIGKILLed), PostgreSQL inbox.
faultSample({ stack: 'sqs', seed: 4246, events: 60, timeoutMs: 420_000 });
