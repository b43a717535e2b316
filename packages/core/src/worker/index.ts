// Handlers

export type { WorkerConfig } from './config.js';
export type { HandlerContext } from './context.js';
export { defineHandler, type EventHandler } from './handler.js';
export { deriveIdempotencyKey } from './idempotency-key.js';
// Your own steps around the handler
export type { HandlerMiddleware, HandlerStep } from './middleware.js';
// Retry policy
export { backoffCeiling, backoffDelay, type RetryPolicy } from './retry-policy.js';
// Worker
export { createWorker, type Worker, type WorkerStatus } from './worker.js';
