import type { Subscription } from '../contracts/transport.js';

/**
 * A transport's open subscriptions, so that `transport.close()` closes every one of them. Each
 * subscription closes once, however often `close()` is called, and leaves the set when closed.
 */
export interface Subscriptions {
  /** Wraps a consumer's own close in a `Subscription` and tracks it until it is closed. */
  track(close: () => Promise<void>): Subscription;
  /** Closes every open subscription (in parallel) and resolves when all are closed. */
  closeAll(): Promise<void>;
  readonly size: number;
}

/**
 * @example
 * const subscriptions = createSubscriptions();
 * // consume():  return subscriptions.track(() => consumer.close());
 * // close():    await subscriptions.closeAll(); then close the connection
 */
export function createSubscriptions(): Subscriptions {
  const open = new Set<Subscription>();
  return {
    track(close) {
      let closing: Promise<void> | undefined;
      const subscription: Subscription = {
        close: () => {
          closing ??= close().finally(() => open.delete(subscription));
          return closing;
        },
      };
      open.add(subscription);
      return subscription;
    },
    async closeAll() {
      await Promise.all([...open].map((s) => s.close()));
    },
    get size() {
      return open.size;
    },
  };
}
