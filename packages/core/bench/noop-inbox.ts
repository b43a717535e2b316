import type { Inbox } from '../src/contracts/inbox.js';

/**
 * An inbox that keeps nothing: isolates the receiver's own cost (verify, hash, envelope, answer)
 * from what a store costs. Every claim is new.
 */
export const noopInbox: Inbox = {
  claim: async () => ({ status: 'new', token: 't' }),
  markEnqueued: async () => {},
  release: async () => {},
  takeStale: async () => [],
  recordConflict: async () => {},
  purge: async () => 0,
  stats: async () => ({ pending: 0, enqueued: 0, processed: 0, conflicts: 0 }),
};
