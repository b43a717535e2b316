/** One step of a simulated run: what happened at a virtual time, in plain words. */
export interface TimelineStep {
  /** Virtual ms since the simulation started. */
  readonly atMs: number;
  /** `deliver evt_3 attempt 2 · crash after effect, before the record · …` */
  readonly text: string;
}

/**
 * A run's steps in the order they happened. A delivery is one step whose parts (`note`) are
 * joined with ` · `, written out when the delivery ends or pauses.
 */
export interface Timeline {
  readonly steps: readonly TimelineStep[];
  /** A step of its own (an outage, a retention pass). */
  add(atMs: number, text: string): void;
  /** Starts a delivery's step; its parts are added with `note` and it is written by `end`. */
  open(atMs: number, text: string): TimelineLine;
}

export interface TimelineLine {
  note(part: string): void;
  /** Writes the step (once; later notes start a new step on the next `end`). */
  end(): void;
}

export function createTimeline(): Timeline {
  const steps: TimelineStep[] = [];
  return {
    steps,
    add(atMs, text) {
      steps.push({ atMs, text });
    },
    open(atMs, text) {
      let parts = [text];
      return {
        note(part) {
          parts.push(part);
        },
        end() {
          if (parts.length === 0) return;
          steps.push({ atMs, text: parts.join(' · ') });
          parts = [];
        },
      };
    },
  };
}

/**
 * The steps as text, one line per step, times right-aligned:
 * ```
 * t=     0ms deliver evt_1 attempt 1 · lease taken · handler ran · crash after effect, before the record
 * t= 30000ms deliver evt_1 attempt 2 · lease taken · handler ran · completed · acked
 * ```
 *
 * @example
 * console.log(formatTimeline(result.timeline));
 */
export function formatTimeline(steps: readonly TimelineStep[]): string {
  const width = Math.max(1, ...steps.map((s) => String(s.atMs).length));
  return steps.map((s) => `t=${String(s.atMs).padStart(width)}ms ${s.text}`).join('\n');
}
