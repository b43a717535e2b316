import { type BackoffOptions, createBackoff } from './backoff.js';

/**
 * Waits between probes while known down: 250 ms doubling up to 5 s, each between half the
 * ceiling and all of it (full jitter could let probes through back to back, each one a call
 * that reaches for what is down).
 */
const PROBE_BACKOFF: BackoffOptions = {
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  random: () => 0.5 + Math.random() / 2,
};

export interface DownStateOptions {
  /**
   * Waits between probes while known down. Default 250 ms doubling up to 5 s, each wait between
   * half the ceiling and the ceiling (125–250 ms, then 250–500 ms, …).
   */
  readonly probeBackoff?: BackoffOptions | undefined;
  readonly now?: (() => number) | undefined;
}

/**
 * Whether a broker (or a file, a server) is known down, so that callers fail fast instead of each
 * waiting for the same timeout: after `failed()`, `admit()` answers false (fail at once without
 * calling) except for one probe at a time, let through after a backed-off wait; the first call
 * that reports `succeeded()` marks it up again. Synchronous, so it also guards blocking calls.
 * Every admitted call must report `succeeded()` or `failed()`. One per thing guarded; not shared
 * across processes.
 */
export interface DownState {
  /** True when the call may go ahead: up, or this call is the probe. */
  admit(): boolean;
  /** The call got an answer (a refusal on the call's own merits counts): up. */
  succeeded(): void;
  /** The call got no answer (timeout, connection refused, locked): known down. */
  failed(): void;
  /** When it went down (ms since epoch), while known down. */
  readonly downSince: number | undefined;
}

/**
 * @example
 * const state = createDownState();
 * if (!state.admit()) throw new TransportUnavailableError('mybroker: known down; failing fast until a probe succeeds');
 * try { await call(); state.succeeded(); } catch (err) { state.failed(); throw err; }
 */
export function createDownState(options: DownStateOptions = {}): DownState {
  const now = options.now ?? Date.now;
  const backoff = createBackoff(options.probeBackoff ?? PROBE_BACKOFF);
  let downSince: number | undefined;
  let nextProbeAt = 0;
  let probing = false;

  return {
    get downSince() {
      return downSince;
    },
    admit() {
      if (downSince === undefined) return true;
      if (probing || now() < nextProbeAt) return false;
      probing = true;
      return true;
    },
    succeeded() {
      probing = false;
      downSince = undefined;
      backoff.reset();
    },
    failed() {
      probing = false;
      downSince ??= now();
      nextProbeAt = now() + backoff.next();
    },
  };
}
