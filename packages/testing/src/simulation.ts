import {
  createEnvelope,
  createWorker,
  type EventHandler,
  type EventState,
  type HandlerMiddleware,
  type Inbox,
  type Logger,
  type RecordStore,
  type RetryPolicy,
} from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { createVirtualClock, DEFAULT_START_AT } from './clock.js';
import { type Fault, describeFault, outageAt } from './faults.js';
import { faultStep } from './fault-step.js';
import { seededRandom } from './random.js';
import { createSimRecords } from './sim-records.js';
import { createSimTransport, type Started } from './sim-transport.js';
import { createTimeline, formatTimeline, type TimelineStep } from './timeline.js';

/** One event the simulation publishes; `source` defaults to `sim`. */
export interface SimEvent {
  /** The event id: faults and the timeline name it. */
  readonly id: string;
  /** The envelope type: the handler of that type runs it. */
  readonly type: string;
  /** The ordering key (the simulated broker does not keep per-key order). */
  readonly key?: string | undefined;
  /** A string or bytes as they are, anything else JSON-encoded (as `createEnvelope`). */
  readonly payload: unknown;
  /** The envelope source. Default `sim`. */
  readonly source?: string | undefined;
  /** Envelope headers (lower-cased). */
  readonly headers?: Record<string, string> | undefined;
}

/** A record store the simulation can also purge (retention), as the inbox stores can. */
export type SimStore = RecordStore & Partial<Pick<Inbox, 'purge'>>;

/** What `runSimulation` takes. Only `handlers` and `events` are required. */
export interface SimulationOptions {
  /** One per event type (`defineHandler`), as for `createWorker`. */
  readonly handlers: readonly EventHandler[];
  /** Published in this order, `spacingMs` apart, starting at virtual time 0. */
  readonly events: readonly SimEvent[];
  /** What goes wrong (see `Fault`). Default none. */
  readonly faults?: readonly Fault[] | undefined;
  /** Seeds the backoff jitter: the same seed and inputs give the same run. Default 0. */
  readonly seed?: number | undefined;
  /**
   * The worker's record store. Default: a memory store on the virtual clock. Pass your own
   * (`embedded.records`, a `createPostgresInbox` store) to use the same-transaction marks; its
   * leases are put on virtual time by the simulation (see the docs), its timestamps stay real.
   */
  readonly records?: SimStore | undefined;
  /** The broker's lock per delivery and the worker's processing lease, virtual ms. Default 30 000. */
  readonly lockMs?: number | undefined;
  /** The worker's retry policy. Default the worker's (8 attempts, 1 s doubling to 5 min, full jitter). */
  readonly retry?: Partial<RetryPolicy> | undefined;
  /**
   * Retention on virtual time: every `everyMs`, records received more than `keepMs` ago are
   * purged from the store (its `purge`). Default none.
   */
  readonly retention?: { readonly keepMs: number; readonly everyMs: number } | undefined;
  /** Virtual ms between two published events. Default 100. */
  readonly spacingMs?: number | undefined;
  /** Deliveries before the run is stopped as not settling. Default 10 000. */
  readonly maxDeliveries?: number | undefined;
  /** Your own steps around the handler (after the simulation's own). */
  readonly middleware?: readonly HandlerMiddleware[] | undefined;
  /** The worker's logger. Default silent. */
  readonly logger?: Logger | undefined;
  /** Virtual epoch ms at which the run starts. Default 2026-01-01T00:00:00Z. */
  readonly startAt?: number | undefined;
}

/** What a run did. */
export interface SimulationResult {
  /** The jitter seed it ran with. */
  readonly seed: number;
  /** The faults it injected. */
  readonly faults: readonly Fault[];
  /** What happened, in order: print it with `formatTimeline` (or `String(result)`). */
  readonly timeline: readonly TimelineStep[];
  /** Every message was acked (no delivery was left) before `maxDeliveries`. */
  readonly settled: boolean;
  /** Deliveries made, every copy and attempt counted. */
  readonly deliveries: number;
  /** Virtual ms from the start to the last step. */
  readonly elapsedMs: number;
  /** Each event's record state at the end (undefined: no record, e.g. purged by retention). */
  readonly states: ReadonlyMap<string, EventState | undefined>;
  /** The record store the run used (the one given, or the memory store). */
  readonly records: RecordStore;
  /** The timeline, one line per step (`formatTimeline`). */
  toString(): string;
}

const HOUR = 3_600_000;

/**
 * Runs handlers through the real worker (`createWorker`: guard, attempts gate, retry policy,
 * dead-lettering) over a simulated broker and record store on a virtual clock, with the given
 * faults. The simulation drives every delivery itself, one at a time in virtual-time order, and
 * waits for the worker to settle it before the next, so a run depends only on its inputs and
 * `seed`: no real timer is set (the worker runs with its heartbeat off), and a simulated week of
 * retries takes milliseconds. Handlers should not read the real clock or set timers of their
 * own if their runs are to repeat exactly.
 *
 * @example
 * const result = await runSimulation({
 *   handlers: [onPayment],
 *   events: [{ id: 'evt_1', type: 'payment', key: 'acct_1', payload: { amount: 5 } }],
 *   faults: [{ kind: 'crash', event: 'evt_1', delivery: 1, point: 'after-effect' }],
 * });
 * console.log(String(result)); // one line per step
 */
export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const seed = options.seed ?? 0;
  const faults = options.faults ?? [];
  const lockMs = options.lockMs ?? 30_000;
  const spacingMs = options.spacingMs ?? 100;
  const maxDeliveries = options.maxDeliveries ?? 10_000;
  const clock = createVirtualClock(options.startAt ?? DEFAULT_START_AT);
  const start = clock.now();
  const timeline = createTimeline();
  const inner: SimStore = options.records ?? createMemoryStore({ now: clock.now });
  const transport = createSimTransport({ clock, timeline, faults, lockMs });
  const records = createSimRecords({ inner, clock, faults, registry: transport.registry });
  const worker = createWorker({
    transport,
    records,
    handlers: options.handlers,
    middleware: [faultStep(transport.registry), ...(options.middleware ?? [])],
    retry: options.retry,
    concurrency: 1,
    heartbeatMs: false,
    consumer: 'simulated-worker',
    logger: options.logger,
    now: clock.now,
    random: seededRandom(seed),
  });

  options.events.forEach((event, i) => {
    const publishedAt = start + i * spacingMs;
    const envelope = createEnvelope({
      id: event.id,
      source: event.source ?? 'sim',
      type: event.type,
      key: event.key,
      payload: event.payload,
      headers: event.headers,
      receivedAt: new Date(publishedAt),
    });
    const delay = faults.find((f) => f.kind === 'delay' && f.event === event.id);
    const held = delay?.kind === 'delay' ? delay.ms : 0;
    transport.enqueue(envelope, publishedAt + held, delay && describeFault(delay));
    for (const f of faults) {
      if (f.kind === 'duplicate' && f.event === event.id)
        transport.enqueue(envelope, publishedAt + f.afterMs, 'duplicate');
    }
  });

  // Outage boundaries and retention passes, in virtual time, as steps of their own.
  const marks: { at: number; run: () => Promise<void> | void }[] = [];
  for (const f of faults) {
    if (f.kind !== 'broker-outage' && f.kind !== 'store-outage') continue;
    const what = f.kind === 'broker-outage' ? 'broker' : 'store';
    marks.push({ at: start + f.atMs, run: () => timeline.add(f.atMs, describeFault(f)) });
    marks.push({
      at: start + f.atMs + f.forMs,
      run: () => timeline.add(f.atMs + f.forMs, `${what} up`),
    });
  }
  marks.sort((a, b) => a.at - b.at);
  const retention = options.retention;
  let nextPurge = retention === undefined ? Number.POSITIVE_INFINITY : start + retention.everyMs;

  const purge = async () => {
    if (retention === undefined || inner.purge === undefined) return;
    const olderThan = new Date(clock.now() - retention.keepMs);
    const purged = await inner.purge({ olderThan });
    if (purged > 0) {
      const days = Math.round((retention.keepMs / (24 * HOUR)) * 10) / 10;
      timeline.add(clock.elapsed(), `retention: purged ${purged} records older than ${days}d`);
    }
  };

  const brokerOutage = (at: number) => outageAt(faults, 'broker-outage', at - start);

  await worker.start();
  const paused: Started[] = [];
  const resumed = new WeakSet<Started>();
  const resume = (p: Started) => {
    resumed.add(p);
    p.resume();
  };
  let deliveries = 0;
  let settled = true;

  /** Drives one delivery until it is done or paused; resumes the attempts it overtook. */
  const drive = async (started: Started): Promise<void> => {
    const outcome = resumed.has(started)
      ? await started.done.then(() => 'done' as const)
      : await Promise.race([
          started.done.then(() => 'done' as const),
          started.paused.then(() => 'paused' as const),
        ]);
    if (outcome === 'paused') {
      // Its lock runs out: the broker offers the message again when it expires.
      transport.requeue(started.message, started.message.lockedUntil);
      paused.push(started);
      return;
    }
    for (const p of paused.filter((q) => q.message === started.message && q !== started)) {
      paused.splice(paused.indexOf(p), 1);
      resume(p);
      await drive(p);
    }
  };

  try {
    for (;;) {
      const due = transport.due();
      if (due === undefined) {
        const p = paused.shift();
        if (p === undefined) break;
        resume(p);
        await drive(p);
        continue;
      }
      const outage = brokerOutage(due.availableAt);
      const at = outage === undefined ? due.availableAt : start + outage.atMs + outage.forMs;
      while (marks.length > 0 && (marks[0] as { at: number }).at <= at) {
        const mark = marks.shift() as { at: number; run: () => void };
        clock.advanceTo(mark.at);
        await mark.run();
      }
      while (nextPurge <= at) {
        clock.advanceTo(nextPurge);
        await purge();
        nextPurge += (retention as { everyMs: number }).everyMs;
      }
      clock.advanceTo(at);
      if (outage !== undefined) {
        transport.requeue(due, at);
        continue;
      }
      if (deliveries >= maxDeliveries) {
        settled = false;
        timeline.add(clock.elapsed(), `stopped: ${maxDeliveries} deliveries and still not settled`);
        break;
      }
      deliveries += 1;
      await drive(transport.deliver(due));
    }
  } finally {
    for (const p of paused.splice(0)) resume(p);
    await worker.close();
  }

  const states = new Map<string, EventState | undefined>();
  for (const event of options.events) {
    states.set(event.id, (await inner.get(event.source ?? 'sim', event.id))?.state);
  }
  const steps = timeline.steps;
  const result: SimulationResult = {
    seed,
    faults,
    timeline: steps,
    settled,
    deliveries,
    elapsedMs: clock.elapsed(),
    states,
    records: inner,
    toString: () => formatTimeline(steps),
  };
  return result;
}
