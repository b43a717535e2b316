import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChaosBroker, ChaosPostgres } from './brokers.js';
import { check, type Summary } from './checker.js';
import { type Child, forkChild, stopChild } from './children.js';
import { describePlan, type KillAt, planFor } from './plan.js';
import { createSender } from './sender.js';
import {
  embeddedFile,
  type HandlerMode,
  openStack,
  type StackName,
  type StackSpec,
} from './stack.js';
import { freePort } from './free-port.js';

export interface RunOptions {
  readonly stack: StackName;
  readonly mode: HandlerMode;
  readonly seed: number;
  readonly events: number;
  readonly broker: ChaosBroker;
  readonly log: (line: string) => void;
  /** Each worker's and receiver's lock / lease (ms). Default 3 000. */
  readonly lockMs?: number | undefined;
  /** Longest wait for every accepted event to reach the ledger (ms). */
  readonly drainTimeoutMs?: number | undefined;
  /**
   * The harness's own PostgreSQL for the inbox, record and ledger (instead of the shared one),
   * restarted once at the point the seed draws. PostgreSQL-backed stacks only.
   */
  readonly postgres?: ChaosPostgres | undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DEDUPE_WINDOW_MS = 2_000;

const dieEnv = (k: KillAt | undefined) => (k ? `${k.point}:${k.after}` : '');

/**
 * One run: the plan from the seed, a receiver and two workers as child processes over the stack,
 * the sender, the faults as planned, then the checker over the ledger. Cleans up what it created.
 */
export async function runOnce(options: RunOptions): Promise<Summary> {
  const { stack, mode, seed, events, broker, log, postgres } = options;
  if (postgres && stack === 'embedded') throw new Error('the embedded stack has no PostgreSQL');
  const lockMs = options.lockMs ?? 3_000;
  const plan = planFor(seed, events, broker.restartable, postgres !== undefined);
  for (const line of describePlan(plan)) log(line);
  broker.defects(); // from here on: this run's
  const started = Date.now();
  // Where the run's time goes, for the summary: ms from the previous mark to each phase's end.
  const phasesMs: Record<string, number> = {};
  let lastMark = started;
  const mark = (phase: string) => {
    const now = Date.now();
    phasesMs[phase] = now - lastMark;
    lastMark = now;
  };
  const runId = `${seed}_${randomBytes(3).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-chaos-'));
  const spec: StackSpec = {
    stack,
    runId,
    file: embeddedFile(dir),
    pgUrl:
      postgres?.url ?? process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    brokerUrl: broker.url,
    lockMs,
    dedupeWindowMs: DEDUPE_WINDOW_MS,
  };
  const owner = await openStack(spec);
  const { transport } = owner;
  if ('start' in transport && typeof transport.start === 'function') await transport.start();
  const faults: string[] = [];
  const env = (extra: Record<string, string>) => ({
    CHAOS_STACK: JSON.stringify(spec),
    CHAOS_MODE: mode,
    ...extra,
  });
  let stopping = false;
  const port = await freePort();
  const secret = `whsec_${randomBytes(12).toString('hex')}`;

  // A process that cannot start (its store or broker is down) is started again until it is ready.
  const startUntilReady = async (what: string, start: () => Promise<Child>): Promise<Child> => {
    for (let failures = 0; ; failures++) {
      try {
        const child = await start();
        if (failures > 0) faults.push(`${what} started after ${failures} failed starts`);
        return child;
      } catch (err) {
        if (stopping) throw err;
        await sleep(Math.min(2_000, 100 * 2 ** failures));
      }
    }
  };

  // Receivers: each generation takes the next kill point; one that died is replaced.
  let receiverGen = 0;
  let receiver: Child | undefined;
  const killedByHarness = new WeakSet<Child>();
  let receiverReady: Promise<void> = Promise.resolve();
  let receiverEndedAt: number | undefined;
  const endedReceivers = new WeakSet<Child>();
  /** Resolves once a receiver is up that has not ended and is not being killed by the harness. */
  const untilReceiverListens = async (): Promise<void> => {
    const listening = (c: Child | undefined) =>
      c !== undefined && !endedReceivers.has(c) && !killedByHarness.has(c);
    while (!stopping && !listening(receiver)) await sleep(50);
  };
  const spawnReceiver = async (): Promise<void> => {
    const die = plan.receivers[receiverGen++];
    const child = await startUntilReady('a receiver', () =>
      forkChild(
        './receiver-process.ts',
        env({
          CHAOS_PORT: String(port),
          CHAOS_SECRET: secret,
          CHAOS_DIE: dieEnv(die),
        }),
      ),
    );
    receiver = child;
    if (receiverEndedAt !== undefined)
      faults.push(`a receiver listens again ${Date.now() - receiverEndedAt} ms after`);
    void child.exited.then((how) => {
      endedReceivers.add(child);
      if (stopping || receiver !== child) return;
      receiverEndedAt = Date.now();
      const by = killedByHarness.has(child)
        ? 'killed by the harness'
        : `kill point ${die ? `${die.point} #${die.after}` : 'none'}`;
      faults.push(`receiver ended (${how}, ${by})`);
      receiverReady = spawnReceiver().catch((err) => log(`  receiver restart failed: ${err}`));
    });
  };
  await spawnReceiver();

  // Workers: two at a time; each generation takes the next kill point; one that died is replaced.
  let workerGen = 0;
  const workers = new Set<Child>();
  const spawnWorker = async (): Promise<void> => {
    const die = plan.workers[workerGen++];
    const child = await startUntilReady('a worker', () =>
      forkChild('./worker-process.ts', env({ CHAOS_DIE: dieEnv(die) })),
    );
    workers.add(child);
    void child.exited.then((how) => {
      workers.delete(child);
      if (stopping) return;
      faults.push(
        `worker ended (${how})${die ? ` with kill point ${die.point} #${die.after}` : ''}`,
      );
      void spawnWorker().catch((err) => log(`  worker restart failed: ${err}`));
    });
  };
  await Promise.all([spawnWorker(), spawnWorker()]);
  mark('start');

  // Faults timed on progress.
  const pending = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  let killedReceiver = false;
  const restarts = [...plan.brokerRestarts];
  let restarting: Promise<void> = Promise.resolve();
  // The receivers' answers while PostgreSQL is down: 503 (or no answer from a receiver being
  // replaced), never a 2xx for an event not stored, never another error.
  let outage: Map<string, number> | undefined;
  const outageAnswers = new Map<string, number>();
  let postgresRestart = postgres ? plan.postgresRestart : undefined;
  const onAccepted = (accepted: number) => {
    if (postgres && postgresRestart && accepted / events >= postgresRestart.at) {
      const { mode: how, downMs } = postgresRestart;
      postgresRestart = undefined;
      // Stopped only while a receiver listens, so the outage is met by a receiver (its 503s),
      // not only by the connection refusals of one being replaced.
      const restartPostgres = async (): Promise<void> => {
        await untilReceiverListens();
        if (stopping) return;
        outage = outageAnswers;
        const t = Date.now();
        try {
          await postgres.restart(how, downMs);
          const answers = [...outageAnswers].map(([k, v]) => `${k}×${v}`).join(' ') || 'none';
          faults.push(
            `PostgreSQL stopped (${how}) when due at ${accepted} accepted, ${Date.now() - t} ms down; answers meanwhile: ${answers}`,
          );
        } catch (err) {
          faults.push(`PostgreSQL restart failed: ${err}`);
        } finally {
          outage = undefined;
        }
      };
      track(restartPostgres());
    }
    const share = accepted / events;
    if (!killedReceiver && share >= plan.receiverKillAt) {
      killedReceiver = true;
      faults.push(`the harness SIGKILLs the receiver at ${accepted} accepted`);
      if (receiver) {
        killedByHarness.add(receiver);
        receiver.process.kill('SIGKILL');
      }
    }
    while (restarts.length && share >= (restarts[0]?.at ?? 1)) {
      const r = restarts.shift() as { at: number; downMs: number };
      restarting = restarting.then(async () => {
        const t = Date.now();
        await broker.restart(r.downMs);
        faults.push(`broker restarted at ${accepted} accepted (${Date.now() - t} ms down)`);
      });
      track(restarting);
    }
  };
  let stopped = false;
  const stopMs = Math.max(lockMs, 6_000) + 2_000;
  const monitor = setInterval(() => {
    if (stopped) return;
    void owner.ledger.rows().then(
      (rows) => {
        if (stopped || rows.length < plan.stopAt * events) return;
        const victim = [...workers][0];
        if (!victim) return;
        stopped = true;
        victim.process.kill('SIGSTOP');
        faults.push(`SIGSTOP of a worker at ${rows.length} processed, SIGCONT after ${stopMs} ms`);
        track(sleep(stopMs).then(() => victim.process.kill('SIGCONT')));
      },
      () => {},
    );
  }, 250);

  const sender = createSender({
    url: () => `http://127.0.0.1:${port}`,
    secret,
    runId,
    plan,
    concurrency: 8,
    timeoutMs: 3_000,
    onAccepted,
    onAnswer: (status) => outage?.set(status, (outage.get(status) ?? 0) + 1),
  });
  const { report } = sender;
  // Progress every 30 s, so a long run shows its pace while it runs.
  const progress = setInterval(() => {
    void owner.ledger.rows().then(
      (rows) =>
        log(
          `  ${Math.round((Date.now() - started) / 1000)} s: ${report.accepted.size} accepted, ${rows.length} processed, ${report.requests} requests`,
        ),
      () => {},
    );
  }, 30_000);
  try {
    await sender.sendAll();
    mark('send');
    const within = await sender.replay(2);
    await restarting;
    mark('replayWithin');
    const drainBy = Date.now() + (options.drainTimeoutMs ?? 180_000);
    const drained = async () => {
      const ids = new Set((await owner.ledger.rows()).map((r) => r.id));
      return [...report.accepted.keys()].every((id) => ids.has(id));
    };
    while (!(await drained().catch(() => false)) && Date.now() < drainBy) await sleep(250);
    mark('drain');
    // Beyond the broker's dedupe window (where it has one), then long enough for late redeliveries.
    const window = transport.capabilities.brokerDedupe;
    await sleep((window && window.windowMs <= 10_000 ? window.windowMs : 0) + 500);
    const beyond = await sender.replay(3);
    faults.push(`replayed ${within} events within the dedupe window and ${beyond} beyond it`);
    mark('replayBeyond');
    await Promise.all(pending);
    await sleep(2 * lockMs);
    mark('settle');
  } finally {
    stopping = true;
    clearInterval(monitor);
    clearInterval(progress);
    await receiverReady;
    await Promise.all([...workers].map((w) => stopChild(w)));
    if (receiver) await stopChild(receiver);
  }
  mark('stop');
  const summary = await check({
    stack: postgres ? `${stack}+pg-restart` : stack,
    mode,
    seed,
    events,
    requests: report.requests,
    accepted: report.accepted,
    gaveUp: report.gaveUp,
    forgedAccepted: report.forgedAccepted,
    rows: await owner.ledger.rows(),
    records: owner.records,
    faults,
    statuses: report.statuses,
    outageAnswers: postgres ? outageAnswers : undefined,
    brokerDefects: broker.defects(),
    durationMs: Date.now() - started,
  });
  mark('check');
  await owner.close();
  await owner.drop();
  rmSync(dir, { recursive: true, force: true });
  return { ...summary, phasesMs };
}
