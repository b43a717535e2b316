/**
 * The soak: steady Stripe-signed load at a fixed rate through a receiver and two workers (child
 * processes, no faults) for a number of minutes, sampled every `sampleMs`: each child's memory
 * (RSS, heap after a full collection), the lag (accepted − processed, and the time from the 2xx
 * to the ledger row in that window), the broker's backlog and the machine's load average.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BacklogProbe, Transport } from '@onceflow/core';
import Stripe from 'stripe';
import type { ChaosBroker } from './brokers.js';
import { type Child, forkChild, stopChild } from './children.js';
import type { MemoryReport } from './memory-report.js';
import { eventId } from './sender.js';
import {
  defaultThresholds,
  type SoakSample,
  type SoakVerdict,
  soakVerdict,
} from './soak-sampler.js';
import { embeddedFile, openStack, type StackName, type StackSpec } from './stack.js';
import { freePort } from './free-port.js';

export interface SoakOptions {
  readonly stack: StackName;
  readonly broker: ChaosBroker;
  readonly minutes: number;
  /** Events a second. */
  readonly rate: number;
  /** Between samples (ms). Default 15 000. */
  readonly sampleMs?: number | undefined;
  readonly log: (line: string) => void;
}

export interface SoakResult {
  readonly stack: StackName;
  readonly minutes: number;
  readonly rate: number;
  readonly samples: readonly SoakSample[];
  readonly verdict: SoakVerdict;
  readonly accepted: number;
  /** Accepted events with no ledger row once the load stopped and the workers drained. */
  readonly lost: number;
  /** Ids with more than one ledger row. */
  readonly doubled: number;
  /** Non-2xx answers and timeouts the sender retried. */
  readonly retried: number;
  /** Every answer the sender got, by status (`timeout`, `refused` for no answer). */
  readonly statuses: Readonly<Record<string, number>>;
  /** Children that ended during the soak. */
  readonly ended: readonly string[];
  readonly ok: boolean;
}

/** Open requests the sender allows itself. */
const MAX_IN_FLIGHT = 64;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stripe = new Stripe('sk_test_chaos');

const hasBacklog = (t: Transport): t is Transport & BacklogProbe =>
  typeof (t as Partial<BacklogProbe>).backlog === 'function';

const quantile = (sorted: readonly number[], q: number) =>
  sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);

/** Asks a child for its memory; undefined if it does not answer within `timeoutMs`. */
function askMemory(child: Child, timeoutMs = 10_000): Promise<MemoryReport | undefined> {
  const p = child.process;
  if (!p.connected) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onMessage = (m: { kind?: string }) => {
      if (m.kind !== 'memory') return;
      done(m as MemoryReport);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    const done = (r: MemoryReport | undefined) => {
      clearTimeout(timer);
      p.off('message', onMessage);
      resolve(r);
    };
    p.on('message', onMessage);
    p.send({ kind: 'memory' });
  });
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const { stack, broker, minutes, rate, log } = options;
  const sampleMs = options.sampleMs ?? 15_000;
  const runId = `soak_${randomBytes(3).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-soak-'));
  const spec: StackSpec = {
    stack,
    runId,
    file: embeddedFile(dir),
    pgUrl: process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    brokerUrl: broker.url,
    lockMs: 30_000,
    dedupeWindowMs: 2_000,
  };
  const owner = await openStack(spec);
  const { transport } = owner;
  if ('start' in transport && typeof transport.start === 'function') await transport.start();
  const port = await freePort();
  const secret = `whsec_${randomBytes(12).toString('hex')}`;
  const env = { CHAOS_STACK: JSON.stringify(spec), CHAOS_MODE: 'helper', CHAOS_DIE: '' };

  const ended: string[] = [];
  let stopping = false;
  const children = new Map<string, Child>();
  const spawn = async (name: string, entry: string, extra: Record<string, string> = {}) => {
    const child = await forkChild(entry, { ...env, ...extra });
    children.set(name, child);
    void child.exited.then((how) => {
      if (!stopping) ended.push(`${name} ended (${how})`);
    });
  };
  await spawn('receiver', './receiver-process.ts', {
    CHAOS_PORT: String(port),
    CHAOS_SECRET: secret,
  });
  await Promise.all([
    spawn('worker-1', './worker-process.ts'),
    spawn('worker-2', './worker-process.ts'),
  ]);

  // The steady sender: event n is due at n / rate seconds; each is retried until a 2xx.
  const accepted = new Map<string, number>();
  let retried = 0;
  const statuses: Record<string, number> = {};
  const deliver = async (n: number) => {
    const id = eventId(runId, n);
    const payload = JSON.stringify({
      id,
      object: 'event',
      type: 'chaos.effect',
      created: Math.floor(Date.now() / 1000),
      data: { object: { n } },
    });
    for (let attempt = 0; !stopping || attempt === 0; attempt++) {
      const header = stripe.webhooks.generateTestHeaderString({ payload, secret });
      const status = await fetch(`http://127.0.0.1:${port}/webhooks/stripe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': header },
        body: payload,
        signal: AbortSignal.timeout(10_000),
      }).then(
        async (res) => {
          await res.arrayBuffer();
          return String(res.status);
        },
        (err: Error) => (err.name === 'TimeoutError' ? 'timeout' : 'refused'),
      );
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status.startsWith('2')) {
        accepted.set(id, Date.now());
        return;
      }
      retried++;
      await sleep(Math.min(2_000, 50 * 2 ** attempt));
    }
  };
  const inFlight = new Set<Promise<void>>();
  const started = Date.now();
  const loadMs = minutes * 60_000;
  let sent = 0;
  const ticker = setInterval(() => {
    const due = Math.min(
      Math.floor(((Date.now() - started) / 1000) * rate),
      Math.floor((loadMs / 1000) * rate),
    );
    // A sender with a bounded number of open requests, as real ones have: one that cannot keep
    // up falls behind (the `behind` of a sample) instead of piling up retries.
    for (; sent < due && inFlight.size < MAX_IN_FLIGHT; sent++) {
      const p = deliver(sent);
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  }, 20);

  // Samples: the ledger's rows first seen since the last sample give the window's latencies.
  const samples: SoakSample[] = [];
  const seen = new Set<string>();
  const sample = async (): Promise<void> => {
    const atMs = Date.now() - started;
    const rows = await owner.ledger.rows();
    const latencies: number[] = [];
    for (const r of rows) {
      if (seen.has(r.id)) continue;
      const at = accepted.get(r.id);
      // A row can land before the sender has read the 2xx: counted at the next sample.
      if (at === undefined) continue;
      seen.add(r.id);
      latencies.push(Math.max(0, r.firstAt - at));
    }
    latencies.sort((a, b) => a - b);
    const backlog = hasBacklog(transport)
      ? await transport.backlog().then(
          (b) => b.ready + (b.inFlight ?? 0) + (b.delayed ?? 0),
          () => undefined,
        )
      : undefined;
    const memory: Record<string, MemoryReport | undefined> = {};
    const names = [...children.keys()];
    const reports = await Promise.all(names.map((n) => askMemory(children.get(n) as Child)));
    names.forEach((n, i) => {
      memory[n] = reports[i];
    });
    const s: SoakSample = {
      atMs,
      accepted: accepted.size,
      behind: Math.max(0, Math.floor((atMs / 1000) * rate) - sent),
      processed: seen.size,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      backlog,
      load1: loadavg()[0] ?? 0,
      memory,
    };
    samples.push(s);
    const rss = names.map((n) => `${n} ${((memory[n]?.rss ?? 0) / 1048576).toFixed(1)}`).join(', ');
    log(
      `  ${(atMs / 1000).toFixed(0)} s: accepted ${s.accepted}, lag ${s.accepted - s.processed}, ` +
        `p50/p99 ${s.p50Ms}/${s.p99Ms} ms, backlog ${backlog ?? '-'}, load ${s.load1.toFixed(2)}; rss MB ${rss}`,
    );
  };

  try {
    while (Date.now() - started < loadMs) {
      await sleep(Math.min(sampleMs, Math.max(0, started + loadMs - Date.now())));
      await sample();
    }
    clearInterval(ticker);
    await Promise.race([Promise.all(inFlight), sleep(30_000)]);
    // Drain: every accepted event reaches the ledger (or a minute passes).
    const drainBy = Date.now() + 60_000;
    while (Date.now() < drainBy) {
      const ids = new Set((await owner.ledger.rows()).map((r) => r.id));
      if ([...accepted.keys()].every((id) => ids.has(id))) break;
      await sleep(500);
    }
  } finally {
    clearInterval(ticker);
    stopping = true;
    await Promise.all([...children.values()].map((c) => stopChild(c)));
  }
  const rows = await owner.ledger.rows();
  const ids = new Set(rows.map((r) => r.id));
  const lost = [...accepted.keys()].filter((id) => !ids.has(id)).length;
  const doubled = rows.filter((r) => r.rows > 1).length;
  await owner.close();
  await owner.drop();
  rmSync(dir, { recursive: true, force: true });
  const verdict = soakVerdict(samples, defaultThresholds(rate));
  return {
    stack,
    minutes,
    rate,
    samples,
    verdict,
    accepted: accepted.size,
    lost,
    doubled,
    retried,
    statuses,
    ended,
    ok: verdict.memoryFlat && verdict.lagFlat && lost === 0 && doubled === 0 && ended.length === 0,
  };
}
