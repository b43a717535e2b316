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
  /**
   * Stops the timer, aborts the signal of each run in progress and waits for those runs to finish
   * (a run that ignores its signal is waited for to the end). Idempotent; `start` is a no-op
   * afterwards.
   */
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
  /** One run; `signal` aborts when `close` is called while it runs. */
  readonly run: (signal: AbortSignal) => Promise<number>;
}): Ticker {
  const { intervalMs, logger, name, run } = options;
  const inFlight = new Map<Promise<number>, AbortController>();
  let timer: NodeJS.Timeout | undefined;
  let ticking = false;
  let closed = false;

  const runOnce = (): Promise<number> => {
    const controller = new AbortController();
    const p = run(controller.signal);
    inFlight.set(p, controller);
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
    for (const controller of inFlight.values()) controller.abort();
    await Promise.allSettled([...inFlight.keys()]);
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
