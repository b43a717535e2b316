import type { Delivery, RecordStore } from '@onceflow/core';

/**
 * A delivery handler that runs `effect` at most once per (source, id) across deliveries, using a
 * `RecordStore`'s processing lease: the smallest stand-in for the worker's record guard, for transport
 * tests that have no worker. Duplicates (and dead letters) are acked; a busy lease is retried after at most
 * `maxBusyDelayMs`; an effect that throws releases the lease and retries. The suite uses it to
 * show that duplicates are harmless when the broker lets them in.
 *
 * @example
 * transport.consume(handleOnce(createMemoryStore(), async (d) => ledger.push(d.envelope.id)), opts);
 */
export function handleOnce(
  store: RecordStore,
  effect: (delivery: Delivery) => Promise<void>,
  options: { readonly leaseMs?: number; readonly maxBusyDelayMs?: number } = {},
): (delivery: Delivery) => Promise<void> {
  const leaseMs = options.leaseMs ?? 30_000;
  const maxBusy = options.maxBusyDelayMs ?? 50;
  return async (delivery) => {
    const { source, id } = delivery.envelope;
    const begun = await store.begin(delivery.envelope, { leaseMs, attempt: delivery.attempt });
    if (begun.status === 'processed' || begun.status === 'dead-lettered') return delivery.ack();
    if (begun.status === 'busy') {
      return delivery.retry({ delayMs: Math.min(begun.retryAfterMs, maxBusy) });
    }
    try {
      await effect(delivery);
    } catch (err) {
      await store.release(source, id, begun.token);
      throw err;
    }
    await store.complete(source, id, begun.token);
    await delivery.ack();
  };
}
