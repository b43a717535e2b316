// The transport
export { type BullmqTransport, createBullmqTransport } from './transport.js';
export type { BullmqTransportConfig } from './config.js';

// Operations
export { deleteBullmqQueue } from './admin.js';

// Job ids (for dashboards and scripts that look jobs up by dedupe key)
export { dedupeKeyOfJobId, jobIdOf } from './job-id.js';
