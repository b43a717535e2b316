import type { BeginOptions, Envelope, ErrorInfo } from '@onceflow/core';
import type { ConformanceStore } from './scenario.js';

/** Steps the scenarios take to bring a record into a state; each fails loudly if refused. */

/** `claim` → `new`: the receiver's token. */
export async function claimed(store: ConformanceStore, env: Envelope, leaseMs: number) {
  const r = await store.claim(env, { leaseMs });
  if (r.status !== 'new') throw new Error(`claim of ${env.id}: ${r.status}`);
  return r.token;
}

/** `claim` then `markEnqueued`: the record is `enqueued`. */
export async function enqueued(store: ConformanceStore, env: Envelope, leaseMs: number) {
  await store.markEnqueued(env.source, env.id, await claimed(store, env, leaseMs));
}

/** `begin` → `acquired`: the attempt's token. */
export async function acquired(
  store: ConformanceStore,
  env: Envelope,
  options: Omit<BeginOptions, 'attempt'> & { readonly attempt?: number },
) {
  const r = await store.begin(env, { attempt: 1, ...options });
  if (r.status !== 'acquired') throw new Error(`begin of ${env.id}: ${r.status}`);
  return r.token;
}

/** `begin` then `complete`: the record is `completed`. */
export async function completed(store: ConformanceStore, env: Envelope, leaseMs: number) {
  await store.complete(env.source, env.id, await acquired(store, env, { leaseMs }));
}

/** `begin` then `scheduleRetry`: the record is `retry-scheduled`. */
export async function retryScheduled(
  store: ConformanceStore,
  env: Envelope,
  leaseMs: number,
  attempt = 1,
) {
  const token = await acquired(store, env, { leaseMs, attempt });
  await store.scheduleRetry(env.source, env.id, token, {
    error: failure(`attempt ${attempt} failed`),
    nextAttemptAt: new Date(Date.now() + 60_000),
  });
}

/** A broker's dead letter (no lease): the record is `dead-lettered`. */
export async function deadLettered(store: ConformanceStore, env: Envelope, reason = 'test') {
  await store.deadLetter(env, undefined, { reason, attempts: 1 });
}

/** The error a failed attempt records. */
export const failure = (message: string): ErrorInfo => ({
  code: 'RETRY_LATER',
  name: 'RetryLaterError',
  message,
});
