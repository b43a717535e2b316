import { faultSample } from './sample.js';

// A Kafka (KRaft) of the harness's own (SIGKILLed), PostgreSQL inbox.
faultSample({ stack: 'kafka', seed: 4245, events: 60, timeoutMs: 480_000 });
