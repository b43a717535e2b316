import { checkRetryDelay, type DeliveryInit, watchLock } from '@onceflow/core/kit';
import { type Envelope, LockLostError } from '@onceflow/core';
import { asTransport } from '../errors.js';
import type { ClaimedMessage, MessageStore } from './messages.js';

/** Longest `retry({ delayMs })` accepted (declared as `maxDelayMs`); longer ones reject with RangeError. */
export const MAX_DELAY_MS = 365 * 24 * 3_600_000;

export interface DeliveryDeps {
  readonly store: MessageStore;
  readonly queue: string;
  /** The lease each delivery gets, and each `renewLock` renews it for (ms). */
  readonly lockMs: number;
}

/**
 * The broker side of one leased message, for the kit's `runDelivery`: each settlement is one
 * statement guarded by the lease token and expiry. A settlement or extension after the lease
 * expired or was taken rejects with `LockLostError` and aborts the signal; the message then
 * belongs to whoever leases it next.
 * `dispose` must be called once the delivery is settled.
 */
export function leasedDelivery(
  deps: DeliveryDeps,
  message: ClaimedMessage,
  envelope: Envelope,
): DeliveryInit & { dispose(): void } {
  const { store, queue } = deps;
  const { seq, token } = message;
  const what = `${queue}/${envelope.id}`;
  const lease = watchLock({ until: message.lockedUntil, describe: `lease on ${what}` });

  const settle = async (op: string, apply: () => boolean): Promise<void> => {
    const held = await asTransport(op, apply);
    if (!held) {
      lease.lost(`${op} found the lease expired or taken`);
      throw new LockLostError(
        `${op} on ${what}: the lease expired or was taken; it will be redelivered`,
      );
    }
  };

  return {
    envelope,
    attempt: message.attempt,
    // Made on first read only (a handler reading `ctx.signal`); `lockLost` answers without it.
    get signal() {
      return lease.signal;
    },
    lockLost: () => lease.isLost(),
    async renewLock() {
      if (lease.isLost()) throw lease.signal.reason;
      const until = await asTransport('renewLock', () => store.extend(seq, token, deps.lockMs));
      if (until === undefined) {
        lease.lost('renewLock found the lease expired or taken');
        throw lease.signal.reason;
      }
      lease.renew(until);
    },
    ack: () => settle('ack', () => store.ack(seq, token)),
    async retry({ delayMs, error }) {
      checkRetryDelay(delayMs, MAX_DELAY_MS);
      await settle('retry', () => store.retry(seq, token, delayMs, error));
    },
    dispose: () => lease.dispose(),
  };
}
