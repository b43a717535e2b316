import { faultSample } from './sample.js';

// A redis-server of the harness's own with AOF (SIGKILLed), and a PostgreSQL of its own for the
// inbox, record and ledger, stopped and started again once (the seed draws how and when).
faultSample({
  stack: 'bullmq',
  seed: 4244,
  events: 60,
  restartPostgres: true,
  timeoutMs: 360_000,
});
