import Stripe from 'stripe';
import type { FaultPlan } from './plan.js';
import { mulberry32, type Rng } from './prng.js';

/**
 * The sender, as real ones behave: every attempt signed anew (Stripe's own SDK), deliveries out of
 * order, some twice later, some twice at the same moment, a retry on any non-2xx or timeout with
 * exponential backoff and jitter, and replays of accepted events.
 */
export interface SenderOptions {
  readonly url: () => string;
  readonly secret: string;
  readonly runId: string;
  readonly plan: FaultPlan;
  readonly concurrency: number;
  /** A request unanswered this long counts as a timeout and is retried (ms). */
  readonly timeoutMs: number;
  /** Called after each newly accepted event, with the number accepted so far. */
  readonly onAccepted?: ((accepted: number) => void) | undefined;
  /** Called with each delivery's answer: an HTTP status, `timeout` or `refused`. */
  readonly onAnswer?: ((status: string) => void) | undefined;
}

export interface SendReport {
  /** First 2xx per event id (ms since the epoch). */
  readonly accepted: Map<string, number>;
  /** Ids that never got a 2xx within the retry horizon, with their last answers. */
  readonly gaveUp: Map<string, string[]>;
  readonly statuses: Map<string, number>;
  requests: number;
  /** Forged deliveries (a changed body) answered 2xx: must stay 0. */
  forgedAccepted: number;
}

const stripe = new Stripe('sk_test_chaos');
/**
 * A sender's retry horizon, scaled down (Stripe retries for three days): it keeps retrying an
 * event this long (ms). On a loaded machine a replaced receiver can take half a minute to listen
 * and an ElasticMQ or Kafka restart as long, so a few minutes of refusals are expected.
 */
const RETRY_HORIZON_MS = 600_000;

export const eventId = (runId: string, n: number) => `evt_${runId}_${n}`;

function body(runId: string, n: number): string {
  return JSON.stringify({
    id: eventId(runId, n),
    object: 'event',
    type: 'chaos.effect',
    created: Math.floor(Date.now() / 1000),
    data: { object: { n } },
  });
}

export function createSender(options: SenderOptions) {
  const report: SendReport = {
    accepted: new Map(),
    gaveUp: new Map(),
    statuses: new Map(),
    requests: 0,
    forgedAccepted: 0,
  };
  const count = (status: string) =>
    report.statuses.set(status, (report.statuses.get(status) ?? 0) + 1);

  const post = async (payload: string, forged = false): Promise<string> => {
    report.requests++;
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret });
    try {
      const res = await fetch(`${options.url()}/webhooks/stripe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': header },
        body: forged ? `${payload} ` : payload,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await res.arrayBuffer();
      return String(res.status);
    } catch (err) {
      const name = (err as Error).name;
      return name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'refused';
    }
  };

  /** Delivers event `n` until a 2xx, backing off (jitter drawn from the id, so it is seeded too). */
  const deliver = async (n: number): Promise<void> => {
    const id = eventId(options.runId, n);
    const jitter = mulberry32(options.plan.seed ^ (n * 2654435761));
    const payload = body(options.runId, n);
    const answers: string[] = [];
    const giveUpAt = Date.now() + RETRY_HORIZON_MS;
    for (let attempt = 0; Date.now() < giveUpAt; attempt++) {
      const status = await post(payload);
      count(status);
      options.onAnswer?.(status);
      answers.push(status);
      if (status.startsWith('2')) {
        if (!report.accepted.has(id)) {
          report.accepted.set(id, Date.now());
          report.gaveUp.delete(id);
          options.onAccepted?.(report.accepted.size);
        }
        return;
      }
      const backoff = Math.min(2_000, 25 * 2 ** attempt);
      await new Promise((r) => setTimeout(r, backoff / 2 + jitter.next() * (backoff / 2)));
    }
    if (!report.accepted.has(id)) report.gaveUp.set(id, answers.slice(-8));
  };

  const forge = async (n: number): Promise<void> => {
    const status = await post(body(options.runId, n), true);
    count(`forged ${status}`);
    if (status.startsWith('2')) report.forgedAccepted++;
  };

  const runLanes = async (work: (() => Promise<void>)[]) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < work.length) await (work[next++] as () => Promise<void>)();
      }),
    );
  };

  return {
    report,
    /** Every event, shuffled, with duplicates, concurrent pairs and a few forgeries. */
    async sendAll(): Promise<void> {
      const { plan } = options;
      const rng: Rng = mulberry32(plan.seed + 1);
      const work: (() => Promise<void>)[] = [];
      for (let n = 0; n < plan.events; n++) {
        work.push(() => deliver(n));
        if (rng.chance(plan.duplicateShare)) work.push(() => deliver(n));
        if (rng.chance(plan.concurrentShare))
          work.push(() => Promise.all([deliver(n), deliver(n)]).then(() => {}));
        if (rng.chance(0.01)) work.push(() => forge(n));
      }
      await runLanes(rng.shuffle(work));
    },
    /** Replays a seeded share of the events (all of them already accepted or given up). */
    async replay(salt: number): Promise<number> {
      const rng = mulberry32(options.plan.seed + salt);
      const picked: number[] = [];
      for (let n = 0; n < options.plan.events; n++)
        if (rng.chance(options.plan.replayShare)) picked.push(n);
      await runLanes(picked.map((n) => () => deliver(n)));
      return picked.length;
    },
  };
}
