// The embedded default: one SQLite file, zero infrastructure
export { createEmbedded, type Embedded } from './embedded.js';
export type { EmbeddedOptions, EmbeddedTransportOptions } from './config.js';
export type { EmbeddedStore } from './store.js';
export type { EmbeddedTransport } from './transport/transport.js';
export type { EmbeddedOutbox } from './outbox.js';

// Effectively-once writes to the same file
export { markProcessedInTransaction } from './mark-processed.js';

// Stale events: apply only what is newer than the aggregate's applied position
export { applyIfNewer } from './apply-if-newer.js';

// Schema, for connections you open yourself
export { applyMigrations } from './migrations.js';
