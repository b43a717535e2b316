import type { Delivery, ProcessedStore } from '@onceflow/core';

/**
 * A delivery handler that runs `effect` at most once per (source, id) across deliveries, using a
 * `ProcessedStore`'s lease: the smallest stand-in for the worker's processed-guard, for transport
 * tests that have no worker. Duplicates are acked; a busy lease is retried after at most
 * `maxBusyDelayMs`; an effect that throws releases the lease and retries. The suite uses it to
 * show that duplicates are harmless when the broker lets them in.
 *
 * @example
 * transport.consume(handleOnce(createMemoryInbox(), async (d) => ledger.push(d.envelope.id)), opts);
 */
export function handleOnce(
  store: ProcessedStore,
  effect: (delivery: Delivery) => Promise<void>,
  options: { readonly leaseMs?: number; readonly maxBusyDelayMs?: number } = {},
): (delivery: Delivery) => Promise<void> {
  const leaseMs = options.leaseMs ?? 30_000;
  const maxBusy = options.maxBusyDelayMs ?? 50;
  return async (delivery) => {
    const { source, id } = delivery.envelope;
    const begun = await store.begin(source, id, { leaseMs });
    if (begun.status === 'processed') return delivery.ack();
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
