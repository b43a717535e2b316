import { LockLostError, OnceflowError, TransportUnavailableError } from '../errors.js';

export interface BrokerCallOptions {
  /** True when the broker said the message's lock is no longer this holder's. */
  readonly lockLost?: (err: unknown) => boolean;
  /** The failure as text for the error message. Default: the error's message. */
  readonly describe?: (err: unknown) => string;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Runs one broker call and turns what it throws into the contract's errors (see `brokerError`).
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
    throw brokerError(what, err, options);
  }
}

/**
 * What a broker's failure is in the contract's terms, the broker's error as `cause`: onceflow
 * errors pass through, a lost lock (`lockLost`) becomes `LockLostError`, and anything else
 * (connection refused, broker restarting, timeouts) `TransportUnavailableError`. For callbacks
 * that settle a promise of their own (a publisher confirm), where `brokerCall` would add one.
 *
 * @example
 * channel.publish(queue, body, options, (err) => (err ? reject(brokerError('mybroker publish', err)) : resolve()));
 */
export function brokerError(
  what: string,
  err: unknown,
  options: BrokerCallOptions = {},
): OnceflowError {
  if (err instanceof OnceflowError) return err;
  const text = (options.describe ?? message)(err);
  if (options.lockLost?.(err))
    return new LockLostError(`${what}: the lock is lost (${text})`, { cause: err });
  return new TransportUnavailableError(`${what} failed: ${text}`, { cause: err });
}
