// The store: Inbox + RecordStore (the event record) over one table
export { type PostgresInbox, createPostgresInbox } from './store.js';
export type { InboxLocation, PostgresInboxConfig } from './config.js';

// Schema
export { type MigrateResult, migrate } from './migrate.js';

// Same-transaction processed mark
export { markProcessed } from './mark-processed.js';
export { withTransaction } from './transaction.js';

// Stale events: apply only what is newer than the aggregate's applied position
export { applyIfNewer } from './apply-if-newer.js';

// Transactional outbox: add in your transaction, publish with core's createOutboxDispatcher
export { type PostgresOutbox, type PostgresOutboxConfig, createPostgresOutbox } from './outbox.js';
