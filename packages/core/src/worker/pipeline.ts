import type { RecordStore } from '../contracts/records.js';
import type { Delivery } from '../contracts/transport.js';
import { OnceflowError } from '../errors.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import { completeRecord, recordFailed, report, settlementRefused } from './apply-verdict.js';
import type { Heartbeat } from './heartbeat.js';
import type { Invoke } from './invoke.js';
import type { Job } from './job.js';
import { SETTLED } from '../transport-kit/settlement.js';
import type { RecordGuard } from './record-guard.js';
import { decideVerdict, PROCESSED, type Verdict, type VerdictPolicy } from './verdict.js';

/**
 * What a step reports when it returns; throwing reports an error. `verdict.ts` turns either into
 * ack, retry or dead-letter.
 */
export type StepResult =
  /** The handler resolved and the event is marked processed. */
  | { readonly status: 'handled' }
  /** An earlier attempt completed this event. */
  | { readonly status: 'duplicate' }
  /** The event record already holds this event as a dead letter (a copy the broker kept). */
  | { readonly status: 'already-dead-lettered' }
  /** The message was not a wire-format envelope (`decodeDelivery`): `reason` says why. */
  | { readonly status: 'undecodable'; readonly reason: string }
  /** Another attempt holds the processing lease right now. */
  | { readonly status: 'busy'; readonly retryAfterMs: number }
  /** `attempt > maxAttempts` on arrival: not run. */
  | { readonly status: 'exhausted' }
  /** No handler for the type; `unknownType` decides between these two. */
  | { readonly status: 'unroutable'; readonly type: string }
  | { readonly status: 'ignored' };

/** The worker's policies, each a plain function the planned attempt calls in order. */
export interface PipelineSteps {
  /** `unknownType`: a result for an undecodable or unrouted job, else `undefined`. */
  readonly route: (job: Job) => StepResult | undefined;
  readonly guard: RecordGuard;
  /** `attemptsGate`: `exhausted`, or `undefined` to run. */
  readonly gate: (job: Job) => StepResult | undefined;
  /** Undefined without a heartbeat (`heartbeatMs: false`). */
  readonly heartbeat: Heartbeat | undefined;
  readonly policyFor: (job: Job) => VerdictPolicy;
  /** Applies the verdict: the record's end, then the broker's settlement (`applyVerdict`). */
  readonly settle: (job: Job, verdict: Verdict) => Promise<void>;
  /**
   * Where an untraced delivery's ack is written by the attempt itself, in `applyVerdict`'s order
   * (the record's `complete`, then `delivery.ack()`, then the count and log line): one async
   * call fewer per delivery. `settle` applies every other verdict, and a traced delivery's ack
   * (its settle span wraps it).
   */
  readonly acks: { readonly records: RecordStore; readonly metrics: OnceflowMetrics | undefined };
  /** True when the delivery runs in a recorded span: its settlement goes through `settle`. */
  readonly traced: (delivery: Delivery) => boolean;
  /** Jobs being handled: the attempt adds its job first and removes it once settled. */
  readonly running: { add(job: Job): void; delete(job: Job): void };
  readonly now: () => number;
}

/** One delivery's attempt, from the guard to the settlement. Never rejects. */
export type Attempt = (job: Job & { dispose(): void }) => Promise<void>;

const HANDLED: StepResult = { status: 'handled' };

/**
 * Plans one handler's attempt, once per handler at `createWorker`: unknown type → record guard
 * (`begin`) → attempts gate → heartbeat → `invoke` (the handler in its middleware) → one verdict
 * (`verdict.ts`) → `settle`. One async function: it awaits the record's `begin`, the handler and
 * the settlement (an untraced ack's two steps, `complete` and `ack`, it awaits itself), and
 * nothing else (the policies between them are synchronous), so a delivery costs a few promises
 * rather than one per policy. `invoke` undefined plans the attempt of a job
 * no handler is registered for (`route` always answers it).
 *
 * Behaves as the policies composed in that order, outermost first: whatever `begin` or the
 * handler throws is decided as an error; a job aborted (lock lost, shutdown) while the guard took
 * its lease does not start its handler.
 */
export function planAttempt(steps: PipelineSteps, invoke: Invoke | undefined): Attempt {
  const { route, guard, gate, heartbeat, policyFor, settle, acks, traced, running, now } = steps;
  return async (job) => {
    running.add(job);
    try {
      let verdict: Verdict;
      try {
        let result = route(job);
        if (result === undefined) {
          let begun = await guard.begin(job);
          if (begun.status === 'busy' && guard.waits(begun))
            begun = await guard.waitOut(job, begun);
          result = guard.admit(job, begun) ?? gate(job);
        }
        if (result === undefined) {
          const beat = heartbeat?.start(job);
          try {
            // Lock lost or shutdown while the guard was taking the lease: do not start the handler.
            if (job.abortedBy !== undefined) throw job.abort.signal.reason;
            if (invoke === undefined) throw new OnceflowError('INTERNAL', 'no handler was routed');
            const started = now();
            try {
              await invoke(job);
            } finally {
              job.handlerMs = now() - started;
            }
          } finally {
            if (beat !== undefined) heartbeat?.stop(beat);
          }
          result = HANDLED;
        }
        // The handled verdict needs no policy: no input or policy object for most deliveries.
        verdict = result === HANDLED ? PROCESSED : decideVerdict({ result }, policyFor(job));
      } catch (error) {
        verdict = decideVerdict({ error }, policyFor(job));
      }
      if (verdict.action !== 'ack' || traced(job.delivery)) {
        await settle(job, verdict);
        return;
      }
      const completing = completeRecord(job, verdict, acks.records);
      if (completing !== undefined) {
        try {
          await completing;
        } catch (err) {
          recordFailed(job, 'complete', err);
        }
      }
      try {
        const acking = job.delivery.ack();
        // An ack recorded before it returned (the kit's `SETTLED`) is not awaited.
        if (acking !== SETTLED) await acking;
      } catch (err) {
        settlementRefused(job, verdict, err);
        return;
      }
      report(job, verdict, acks.metrics);
    } finally {
      job.dispose();
      running.delete(job);
    }
  };
}
