import type { Logger } from './observability/logger.js';

/** A periodic job (relay, retention janitor). */
export interface Ticker {
  /**
   * Runs once now, then every interval until `close`. Idempotent. The timer is unref'd: it never
   * keeps the process alive.
   */
  start(): void;
  /** One run now; resolves with how many items it handled. Rejects if the run fails. */
  runOnce(): Promise<number>;
  /** Stops the timer and waits for runs in progress to finish. Idempotent; `start` is a no-op afterwards. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Timer plumbing shared by the relay and the janitor: timer runs never overlap (a tick that finds
 * the previous run still going is skipped), failures of timer runs are logged, not thrown.
 */
export function createTicker(options: {
  readonly intervalMs: number;
  readonly logger: Logger;
  readonly name: string;
  readonly run: () => Promise<number>;
}): Ticker {
  const { intervalMs, logger, name, run } = options;
  const inFlight = new Set<Promise<number>>();
  let timer: NodeJS.Timeout | undefined;
  let ticking = false;
  let closed = false;

  const runOnce = (): Promise<number> => {
    const p = run();
    inFlight.add(p);
    const forget = () => inFlight.delete(p);
    p.then(forget, forget);
    return p;
  };

  const tick = async (): Promise<void> => {
    if (ticking) return;
    ticking = true;
    try {
      await runOnce();
    } catch (err) {
      logger.error({ err }, `${name} run failed; the next run retries`);
    } finally {
      ticking = false;
    }
  };

  const close = async (): Promise<void> => {
    closed = true;
    if (timer) clearInterval(timer);
    timer = undefined;
    await Promise.allSettled([...inFlight]);
  };

  return {
    start() {
      if (closed || timer) return;
      timer = setInterval(() => void tick(), intervalMs);
      timer.unref();
      void tick();
    },
    runOnce,
    close,
    [Symbol.asyncDispose]: close,
  };
}
