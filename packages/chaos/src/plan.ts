import { mulberry32 } from './prng.js';

export const WORKER_KILL_POINTS = ['before-handler', 'after-effect', 'after-ack'] as const;
export const RECEIVER_KILL_POINTS = ['after-verify', 'after-claim', 'after-publish'] as const;

/** A child's kill point: SIGKILL itself the `after`-th time it passes `point`. */
export interface KillAt {
  readonly point: string;
  readonly after: number;
}

/** Everything a run does to the system, drawn from its seed. */
export interface FaultPlan {
  readonly seed: number;
  readonly events: number;
  /** Kill points of the worker processes, in the order they start (two at first, then replacements). */
  readonly workers: readonly KillAt[];
  /** Kill points of the receiver processes, in the order they start. */
  readonly receivers: readonly KillAt[];
  /** The harness SIGKILLs the receiver of the moment once this share of events was accepted. */
  readonly receiverKillAt: number;
  /** A worker is SIGSTOPped past its lock, then SIGCONTed, at this share of events processed. */
  readonly stopAt: number;
  /** Broker restarts at these shares of events accepted, each down for `downMs`. */
  readonly brokerRestarts: readonly { readonly at: number; readonly downMs: number }[];
  /** Share of events the sender delivers twice (at another place in the sequence). */
  readonly duplicateShare: number;
  /** Share of events the sender delivers twice at the same moment. */
  readonly concurrentShare: number;
  /** Share of events replayed right after sending (within the dedupe window) and after it. */
  readonly replayShare: number;
  /** With the harness's own PostgreSQL: one restart at this share of events accepted. */
  readonly postgresRestart?:
    | { readonly at: number; readonly mode: 'fast' | 'immediate' | 'kill'; readonly downMs: number }
    | undefined;
}

/** The fault plan of `seed` for `events` events. */
export function planFor(
  seed: number,
  events: number,
  restarts: boolean,
  postgresRestart = false,
): FaultPlan {
  const rng = mulberry32(seed);
  // Each worker kill lands within the first share of the events a worker handles.
  const reach = Math.max(4, Math.floor(events / 10));
  const workers = rng
    .shuffle([...WORKER_KILL_POINTS])
    .map((point) => ({ point, after: rng.int(3, reach) }));
  const receivers = rng
    .shuffle([...RECEIVER_KILL_POINTS])
    .map((point) => ({ point, after: rng.int(3, reach) }));
  const plan: FaultPlan = {
    seed,
    events,
    workers,
    receivers,
    receiverKillAt: 0.55 + rng.next() * 0.2,
    stopAt: 0.1 + rng.next() * 0.15,
    brokerRestarts: restarts
      ? [
          { at: 1 / 3, downMs: rng.int(500, 2500) },
          { at: 1 / 2, downMs: rng.int(500, 2500) },
        ]
      : [],
    duplicateShare: 0.1 + rng.next() * 0.2,
    concurrentShare: 0.02 + rng.next() * 0.06,
    replayShare: 0.05,
  };
  // Drawn after everything else, so a seed's other faults are the same with or without it.
  if (!postgresRestart) return plan;
  const modes = ['fast', 'immediate', 'kill'] as const;
  return {
    ...plan,
    postgresRestart: {
      at: 0.2 + rng.next() * 0.6,
      mode: modes[rng.int(0, 2)] ?? 'fast',
      downMs: rng.int(500, 2500),
    },
  };
}

/** The plan in one line per fault, as printed before a run. */
export function describePlan(plan: FaultPlan): string[] {
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  return [
    `seed ${plan.seed}: ${plan.events} events; duplicates ${pct(plan.duplicateShare)}, concurrent ${pct(plan.concurrentShare)}, replays ${pct(plan.replayShare)} within and beyond the dedupe window`,
    `  workers SIGKILL themselves: ${plan.workers.map((k) => `${k.point} #${k.after}`).join(', ')}`,
    `  receivers SIGKILL themselves: ${plan.receivers.map((k) => `${k.point} #${k.after}`).join(', ')}; the harness kills the receiver at ${pct(plan.receiverKillAt)} accepted`,
    `  a worker is SIGSTOPped past its lock at ${pct(plan.stopAt)} processed`,
    plan.brokerRestarts.length
      ? `  broker restarts at ${plan.brokerRestarts.map((r) => `${pct(r.at)} accepted (down ${r.downMs} ms)`).join(', ')}`
      : '  no broker restart',
    ...(plan.postgresRestart
      ? [
          `  PostgreSQL stopped (${plan.postgresRestart.mode}) at ${pct(plan.postgresRestart.at)} accepted, started again after ${plan.postgresRestart.downMs} ms`,
        ]
      : []),
  ];
}
