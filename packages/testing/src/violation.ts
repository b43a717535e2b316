import type { Fault } from './faults.js';
import type { TimelineStep } from './timeline.js';

/**
 * What `checkEffectivelyOnce` throws: the smallest history it found whose run breaks the
 * invariant, with the run's timeline. Recognised by `code`, so two installed copies agree.
 */
export class EffectivelyOnceViolation extends Error {
  /** `EffectivelyOnceViolation`. */
  override name = 'EffectivelyOnceViolation';
  /** The brand: `isEffectivelyOnceViolation` checks it. */
  readonly code = 'EFFECTIVELY_ONCE_VIOLATION' as const;
  /** Why the invariant failed, in its own words. */
  readonly reason: string;
  /** The shrunk history's faults. */
  readonly faults: readonly Fault[];
  /** The failing run, step by step (`formatTimeline` prints it; the message holds it too). */
  readonly timeline: readonly TimelineStep[];
  /** fast-check's seed and path: pass them back to replay this history first. */
  readonly replay: { readonly seed: number; readonly path: string } | undefined;

  constructor(
    message: string,
    details: {
      readonly reason: string;
      readonly faults: readonly Fault[];
      readonly timeline: readonly TimelineStep[];
      readonly replay?: { readonly seed: number; readonly path: string } | undefined;
    },
  ) {
    super(message);
    this.reason = details.reason;
    this.faults = details.faults;
    this.timeline = details.timeline;
    this.replay = details.replay;
  }
}

/** Whether `err` is an `EffectivelyOnceViolation`, from any copy of this package. */
export function isEffectivelyOnceViolation(err: unknown): err is EffectivelyOnceViolation {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { code?: unknown }).code === 'EFFECTIVELY_ONCE_VIOLATION'
  );
}
