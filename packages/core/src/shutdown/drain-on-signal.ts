import { type ShutdownOptions, type ShutdownResult, shutdown } from './shutdown.js';

export interface DrainOnSignalOptions extends ShutdownOptions {
  /** Default `['SIGTERM', 'SIGINT']`. */
  readonly signals?: readonly NodeJS.Signals[] | undefined;
  /**
   * After the shutdown, end the process with `process.exit`: code 0 when nothing was left, 1
   * otherwise (a signal's default action ends the process; with this helper it ends after the
   * drain). Default true; `false` leaves the process to end when nothing keeps it alive.
   */
  readonly exit?: boolean | undefined;
  /** Called with the result before the process exits. */
  readonly onDrained?: ((result: ShutdownResult) => void) | undefined;
}

export interface SignalDrain {
  /** Starts the shutdown now (as a signal would); every call returns the same result. */
  shutdown(): Promise<ShutdownResult>;
  /** Removes the signal listeners (the process's default signal handling returns). */
  dispose(): void;
}

/**
 * On the first of `signals`, runs `shutdown(options)` once: the receiver answers 503 while it
 * drains, in-flight deliveries settle within the deadline, then servers, transports and stores
 * close, and one line reports what was left. Later signals are logged and ignored (the deadline
 * bounds the wait).
 *
 * @example
 * drainOnSignal({ receiver, worker, servers: [server], close: [relay, transport, store], logger });
 */
export function drainOnSignal(options: DrainOnSignalOptions): SignalDrain {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let running: Promise<ShutdownResult> | undefined;

  const start = (reason: string): Promise<ShutdownResult> => {
    if (running) return running;
    running = shutdown(options, reason).then((result) => {
      options.onDrained?.(result);
      const clean = !result.timedOut && result.notClosed.length === 0;
      if (options.exit ?? true) process.exit(clean ? 0 : 1);
      return result;
    });
    return running;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (running) options.logger?.warn({ signal }, 'shutdown: already draining');
    void start(signal);
  };
  for (const signal of signals) process.on(signal, onSignal);
  return {
    shutdown: () => start('shutdown()'),
    dispose() {
      for (const signal of signals) process.off(signal, onSignal);
    },
  };
}
