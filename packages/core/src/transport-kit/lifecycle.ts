import { TransportUnavailableError } from '../errors.js';

export interface LifecycleOptions<T> {
  /** Names the component in errors: `sqs transport orders`. */
  readonly name: string;
  /**
   * The set-up `start()` runs (connect, declare topology); its result is what `start()` resolves
   * to. Default: nothing to set up.
   */
  readonly start?: (() => Promise<T>) | undefined;
  /**
   * The tear-down `close()` runs, once, after a set-up under way has settled: `started` is the
   * set-up's result, or undefined when it never ran or failed.
   */
  readonly close: (started: T | undefined) => Promise<void>;
}

/**
 * The start-once, close-once state of a transport or store. `start` runs the set-up at most once
 * at a time: concurrent callers share one run, a successful run is kept, and a failed one is run
 * again by the next call, so every operation may call `start` first and `publish` never needs a
 * prior `start()`. `close()` is idempotent and final: from its first call on, `start` and
 * `assertOpen` refuse with `TransportUnavailableError` `<name>: <op> after close`, and every call
 * returns the same promise.
 */
export interface Lifecycle<T> {
  /** The set-up's result, running it first if needed. `op` names the caller in the refusal after close. */
  start(op?: string): Promise<T>;
  /** Throws `TransportUnavailableError` once `close()` was called. */
  assertOpen(op: string): void;
  close(): Promise<void>;
  readonly closed: boolean;
}

/** Marks the refusal after close (a registered symbol, so every installed copy of core agrees). */
const AFTER_CLOSE = Symbol.for('onceflow.afterClose');

/**
 * True for the `TransportUnavailableError` a lifecycle throws after `close()`: unavailable for
 * good, so not worth waiting for.
 */
export const isAfterClose = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[AFTER_CLOSE] === true;

/**
 * @example
 * const lifecycle = createLifecycle({
 *   name: `mybroker transport ${queue}`,
 *   start: () => client.connect(),
 *   close: async () => { await subscriptions.closeAll(); await client.disconnect(); },
 * });
 * // start: () => lifecycle.start(),  publish: await lifecycle.start('publish'); …,  close: () => lifecycle.close()
 */
export function createLifecycle<T = void>(options: LifecycleOptions<T>): Lifecycle<T> {
  const setUp = options.start ?? (async () => undefined as T);
  let starting: Promise<T> | undefined;
  let closing: Promise<void> | undefined;

  const assertOpen = (op: string): void => {
    if (closing) {
      const err = new TransportUnavailableError(`${options.name}: ${op} after close`);
      throw Object.defineProperty(err, AFTER_CLOSE, { value: true });
    }
  };

  return {
    start(op = 'start') {
      try {
        assertOpen(op);
      } catch (err) {
        return Promise.reject(err);
      }
      starting ??= (async () => setUp())().catch((err: unknown) => {
        starting = undefined;
        throw err;
      });
      return starting;
    },
    assertOpen,
    close() {
      closing ??= (async () => {
        const started = await starting?.catch(() => undefined);
        await options.close(started);
      })();
      return closing;
    },
    get closed() {
      return closing !== undefined;
    },
  };
}
