import { LockLostError, OnceflowError, TransportUnavailableError } from '../errors.js';

export interface BrokerCallOptions {
  /** True when the broker said the message's lock is no longer this holder's. */
  readonly lockLost?: (err: unknown) => boolean;
  /** The failure as text for the error message. Default: the error's message. */
  readonly describe?: (err: unknown) => string;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Runs one broker call and turns what it throws into the contract's errors, the broker's error as
 * `cause`: onceflow errors pass through, a lost lock (`lockLost`) becomes `LockLostError`, and
 * anything else (connection refused, broker restarting, timeouts) `TransportUnavailableError`.
 *
 * @example
 * const asTransport = <T>(what: string, run: () => Promise<T>) =>
 *   brokerCall(`mybroker ${what}`, run, { lockLost: (err) => isReceiptGone(err) });
 */
export async function brokerCall<T>(
  what: string,
  run: () => T | Promise<T>,
  options: BrokerCallOptions = {},
): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof OnceflowError) throw err;
    const text = (options.describe ?? message)(err);
    if (options.lockLost?.(err))
      throw new LockLostError(`${what}: the lock is lost (${text})`, { cause: err });
    throw new TransportUnavailableError(`${what} failed: ${text}`, { cause: err });
  }
}
