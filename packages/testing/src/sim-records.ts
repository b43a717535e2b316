import { type BeginResult, type RecordStore, StoreUnavailableError } from '@onceflow/core';
import type { VirtualClock } from './clock.js';
import { type Fault, outageAt } from './faults.js';
import type { DeliveryRegistry, SimDelivery } from './sim-delivery.js';

interface Lease {
  readonly token: string;
  until: number;
}

export interface SimRecordsOptions {
  /** The store that keeps the records: the kit's memory store, or the user's own (SQLite, PostgreSQL). */
  readonly inner: RecordStore;
  readonly clock: VirtualClock;
  readonly faults: readonly Fault[];
  readonly registry: DeliveryRegistry;
}

/**
 * The worker's record store in a simulation: `inner` keeps the records, this layer puts their
 * processing leases on virtual time and applies the store's faults.
 *
 * - Leases: each lease taken is tracked with its virtual expiry. When `inner` answers `busy` for
 *   a lease that has expired in virtual time (a real store counts real time), the old lease is
 *   released in `inner` and `begin` asked again: the stale holder's token owns nothing, so its
 *   `complete` and the same-transaction marks (`markProcessedInTransaction`, `markProcessed`)
 *   fail as after a real expiry. A `busy` answer is never shorter than a third of the lease, so
 *   the worker's guard retries through the transport (on virtual time) rather than waiting
 *   on a real timer.
 * - A crashed attempt's writes (`complete`, `scheduleRetry`, …) are dropped: the process is gone.
 * - During a store outage every call rejects with `StoreUnavailableError`.
 *
 * Every outcome is noted on the delivery's timeline step.
 */
export function createSimRecords(options: SimRecordsOptions): RecordStore {
  const { inner, clock, faults, registry } = options;
  const leases = new Map<string, Lease>();
  const keyOf = (source: string, id: string) => `${source}\u0000${id}`;

  const down = (op: string, sim: SimDelivery | undefined) => {
    if (outageAt(faults, 'store-outage', clock.elapsed()) === undefined) return;
    sim?.line.note(`${op} failed: store down`);
    throw new StoreUnavailableError(`simulated store outage (${op})`);
  };
  /** A write by `token`: dropped (true) when its attempt crashed. */
  const dropped = (token: string | undefined, what: string): boolean => {
    const sim = registry.byToken(token);
    if (sim?.crashed !== true) return false;
    sim.line.note(`${what} lost (crashed)`);
    return true;
  };
  /** Whether `token` still holds the tracked lease (a write by a stale holder changes nothing). */
  const holds = (source: string, id: string, token: string) =>
    leases.get(keyOf(source, id))?.token === token;
  const settleLease = (source: string, id: string, token: string) => {
    if (holds(source, id, token)) leases.delete(keyOf(source, id));
  };

  return {
    async begin(envelope, beginOptions): Promise<BeginResult> {
      const sim = registry.byEnvelope(envelope);
      down('begin', sim);
      const key = keyOf(envelope.source, envelope.id);
      let begun = await inner.begin(envelope, beginOptions);
      const held = leases.get(key);
      if (begun.status === 'busy' && held !== undefined && held.until <= clock.now()) {
        await inner.release(envelope.source, envelope.id, held.token);
        leases.delete(key);
        begun = await inner.begin(envelope, beginOptions);
      }
      switch (begun.status) {
        case 'acquired':
          leases.set(key, { token: begun.token, until: clock.now() + beginOptions.leaseMs });
          if (sim !== undefined) registry.addToken(begun.token, sim);
          sim?.line.note('lease taken');
          return begun;
        case 'processed':
          sim?.line.note('already processed');
          return begun;
        case 'dead-lettered':
          sim?.line.note('already dead-lettered');
          return begun;
        case 'busy': {
          const left = held === undefined ? begun.retryAfterMs : held.until - clock.now();
          const retryAfterMs = Math.max(left, Math.floor(beginOptions.leaseMs / 3) + 1);
          sim?.line.note('busy: another attempt holds the lease');
          return { status: 'busy', retryAfterMs };
        }
      }
    },
    async extend(source, id, token, leaseMs) {
      if (dropped(token, 'lease renewal')) return false;
      down('extend', registry.byToken(token));
      if (!holds(source, id, token)) return false;
      const ok = await inner.extend(source, id, token, leaseMs);
      const lease = leases.get(keyOf(source, id));
      if (ok && lease !== undefined) lease.until = clock.now() + leaseMs;
      return ok;
    },
    async complete(source, id, token, completeOptions) {
      if (dropped(token, 'record')) return;
      const sim = registry.byToken(token);
      down('complete', sim);
      const held = holds(source, id, token);
      await inner.complete(source, id, token, completeOptions);
      settleLease(source, id, token);
      sim?.line.note(held ? 'completed' : 'complete ignored: lease lost');
    },
    async release(source, id, token) {
      if (dropped(token, 'release')) return;
      const sim = registry.byToken(token);
      down('release', sim);
      await inner.release(source, id, token);
      settleLease(source, id, token);
      sim?.line.note('lease released');
    },
    async scheduleRetry(source, id, token, retry) {
      if (dropped(token, 'retry record')) return;
      const sim = registry.byToken(token);
      down('scheduleRetry', sim);
      await inner.scheduleRetry(source, id, token, retry);
      settleLease(source, id, token);
      sim?.line.note('retry scheduled');
    },
    async deadLetter(envelope, token, fields) {
      if (dropped(token, 'dead letter')) return;
      const sim = registry.byToken(token) ?? registry.byEnvelope(envelope);
      down('deadLetter', sim);
      await inner.deadLetter(envelope, token, fields);
      if (token !== undefined) settleLease(envelope.source, envelope.id, token);
      sim?.line.note(`dead-lettered: ${fields.reason}`);
    },
    async get(source, id) {
      down('get', undefined);
      return inner.get(source, id);
    },
    async list(query) {
      down('list', undefined);
      return inner.list(query);
    },
    async count(filter) {
      down('count', undefined);
      return inner.count(filter);
    },
    async act(source, id, action) {
      down('act', undefined);
      return inner.act(source, id, action);
    },
  };
}
