import { isOnceflowError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { type BackoffOptions, createBackoff } from '../transport-kit/backoff.js';
import { isAfterClose } from '../transport-kit/lifecycle.js';

/** Waits between start-up attempts while the broker is down: 200 ms doubling up to 5 s, full jitter. */
export const START_BACKOFF: BackoffOptions = { baseDelayMs: 200, maxDelayMs: 5_000 };

export interface WaitForBrokerOptions {
  /** Names what is starting in the log lines: `worker`. */
  readonly what: string;
  readonly logger: Logger;
  /** Aborted by `close()`: the wait ends and `untilAvailable` resolves `false`. */
  readonly signal: AbortSignal;
  readonly backoff?: BackoffOptions | undefined;
}

/** A broker or store that does not answer now and may later (not one closed for good). */
const isUnavailable = (err: unknown): boolean =>
  (isOnceflowError(err, 'TRANSPORT_UNAVAILABLE') || isOnceflowError(err, 'STORE_UNAVAILABLE')) &&
  !isAfterClose(err);

/**
 * Runs `attempt` until it succeeds (`true`) or `signal` aborts (`false`), waiting with backoff
 * and full jitter after each failure that says the broker or store is unavailable. Logs one
 * warning when the first attempt fails and one line when an attempt succeeds after that, not one
 * per try. Any other error (a `ConfigError`, a topology mismatch, a transport already closed)
 * rejects at once.
 *
 * @example
 * const started = await untilAvailable(() => subscribe(), { what: 'worker', logger, signal });
 */
export async function untilAvailable(
  attempt: () => Promise<void>,
  options: WaitForBrokerOptions,
): Promise<boolean> {
  const { logger, signal, what } = options;
  const backoff = createBackoff(options.backoff ?? START_BACKOFF);
  let failures = 0;
  let since = 0;
  while (!signal.aborted) {
    try {
      await attempt();
      if (failures > 0) {
        logger.info(
          { attempts: failures + 1, waitedMs: Date.now() - since },
          `${what}: the broker answers again; started`,
        );
      }
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      if (!isUnavailable(err)) throw err;
      if (failures++ === 0) {
        since = Date.now();
        logger.warn(
          { err },
          `${what}: the broker is unavailable; retrying with backoff until it answers`,
        );
      }
    }
    await pause(backoff.next(), signal);
  }
  return false;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
