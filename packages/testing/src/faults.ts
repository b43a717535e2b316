/**
 * What can go wrong in a simulated run. Each fault names the event it hits by id and, for faults
 * of one delivery, which delivery of that event (1 = the first time the broker hands it to a
 * handler, counting every copy), so a history reads as a list of plain facts and shrinks by
 * dropping them one at a time.
 */
export type Fault =
  /** The broker delivers a second copy of the event `afterMs` after it was published. */
  | { readonly kind: 'duplicate'; readonly event: string; readonly afterMs: number }
  /**
   * The broker holds the event back `ms` after its publish time: later events, of its own key or
   * others, may arrive first (reordering within and across keys).
   */
  | { readonly kind: 'delay'; readonly event: string; readonly ms: number }
  /** The worker's process dies at `point` during that delivery (see `CrashPoint`). */
  | {
      readonly kind: 'crash';
      readonly event: string;
      readonly delivery: number;
      readonly point: CrashPoint;
    }
  /**
   * The delivery's lock (and processing lease) expires while it runs: it pauses `before-handler`
   * or `after-handler` (its effect done, not yet recorded), the broker delivers the event again,
   * and the paused attempt resumes once that delivery is over, its lock lost.
   */
  | {
      readonly kind: 'lock-expiry';
      readonly event: string;
      readonly delivery: number;
      readonly point: 'before-handler' | 'after-handler';
    }
  /** A transient failure before the handler runs (a dependency timed out): retried with backoff. */
  | { readonly kind: 'fail'; readonly event: string; readonly delivery: number }
  /** The broker is down from `atMs` (virtual ms since the start) for `forMs`: no delivery, publish and settlements fail. */
  | { readonly kind: 'broker-outage'; readonly atMs: number; readonly forMs: number }
  /** The worker's record store is down from `atMs` for `forMs`: every call fails `StoreUnavailableError`. */
  | { readonly kind: 'store-outage'; readonly atMs: number; readonly forMs: number };

/**
 * Where a crash happens in one delivery:
 * - `before-handler`: the processing lease is taken, the handler never runs;
 * - `after-effect`: the handler returned (its effects are done), the worker's record of it is lost;
 * - `after-record`: the record is written, the ack (or retry) never reaches the broker.
 *
 * After a crash nothing that attempt does reaches the store or the broker; the broker delivers
 * the event again once its lock expires.
 */
export type CrashPoint = 'before-handler' | 'after-effect' | 'after-record';

/** `duplicate`, `delay`, `crash`, … */
export type FaultKind = Fault['kind'];

/** Every fault kind, in the order the property test draws them. */
export const FAULT_KINDS: readonly FaultKind[] = [
  'duplicate',
  'delay',
  'crash',
  'lock-expiry',
  'fail',
  'broker-outage',
  'store-outage',
];

const CRASH_WORDS: Record<CrashPoint, string> = {
  'before-handler': 'crash before the handler',
  'after-effect': 'crash after effect, before the record',
  'after-record': 'crash after the record, before the ack',
};

/** The words the timeline uses for a fault, e.g. `crash after effect, before the record`. */
export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'duplicate':
      return `duplicate delivery of ${fault.event} ${fault.afterMs}ms after publish`;
    case 'delay':
      return `${fault.event} delayed ${fault.ms}ms (reordered)`;
    case 'crash':
      return CRASH_WORDS[fault.point];
    case 'lock-expiry':
      return `lock expires mid-handler (${fault.point})`;
    case 'fail':
      return 'transient failure before the handler';
    case 'broker-outage':
      return `broker down for ${fault.forMs}ms`;
    case 'store-outage':
      return `store down for ${fault.forMs}ms`;
  }
}

/** Whether virtual time `elapsed` falls inside one of the outages of `kind`. */
export function outageAt(
  faults: readonly Fault[],
  kind: 'broker-outage' | 'store-outage',
  elapsed: number,
): { readonly atMs: number; readonly forMs: number } | undefined {
  for (const f of faults) {
    if (f.kind === kind && elapsed >= f.atMs && elapsed < f.atMs + f.forMs) return f;
  }
  return undefined;
}
