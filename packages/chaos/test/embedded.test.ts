import { faultSample } from './sample.js';

// The embedded default: one SQLite file for the queue, the inbox, the record and the ledger.
faultSample({ stack: 'embedded', seed: 4242, events: 80, timeoutMs: 300_000 });
