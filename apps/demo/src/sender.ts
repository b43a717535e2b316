import { randomUUID } from 'node:crypto';
import { sign as signGithub } from '@octokit/webhooks-methods';
import Stripe from 'stripe';

/**
 * The sender simulator: builds Stripe and GitHub deliveries, signs them with the senders' own SDK
 * code, and delivers them the way at-least-once senders do: out of order, some twice, some twice
 * at the same moment, and again after any non-2xx answer.
 */
export interface SenderConfig {
  readonly receiverUrl: string;
  readonly stripeSecret: string;
  readonly githubSecret: string;
  readonly stripeEvents: number;
  readonly githubEvents: number;
  readonly concurrency: number;
  readonly runId: string;
  /** Add the three poison events (default true). */
  readonly poison?: boolean | undefined;
  /**
   * When set, the poison events are held back: sent (with their duplicates) only after every other
   * delivery was sent and this resolves. Lets a run choose which worker meets them.
   */
  readonly poisonAfter?: (() => Promise<void>) | undefined;
}

export interface SendReport {
  /** Requests sent, retries and duplicates included. */
  readonly requests: number;
  /** Event ids that got a 2xx at least once. */
  readonly accepted: ReadonlySet<string>;
  /** Answers by status code. */
  readonly statuses: ReadonlyMap<number, number>;
  /** Ids the simulator meant as poison (expected to be dead-lettered). */
  readonly poison: ReadonlySet<string>;
  /** Ids never accepted within the sender's retry horizon (`RETRY_HORIZON_MS`). */
  readonly gaveUp: ReadonlySet<string>;
}

/**
 * How long the simulated sender keeps retrying one delivery that gets no 2xx. Real senders retry
 * for hours or days (Stripe: 3 days); five minutes is far past any outage a run has, yet ends a
 * run whose receiver never recovers.
 */
const RETRY_HORIZON_MS = 300_000;

/** The wait before the next attempt: the receiver's `Retry-After` (capped at 2 s), else a short backoff. */
function retryDelayMs(attempt: number, retryAfter: string | null): number {
  const asked = retryAfter === null ? Number.NaN : Number(retryAfter) * 1000;
  return Number.isFinite(asked) ? Math.min(asked, 2_000) : Math.min(20 * (attempt + 1), 1_000);
}

interface Delivery {
  readonly source: 'stripe' | 'github';
  readonly id: string;
  readonly body: string;
  readonly githubEvent?: string;
}

const stripe = new Stripe('sk_test_demo');

function stripeEvent(id: string, i: number, customer: string, amount: number | string): Delivery {
  const body = JSON.stringify({
    id,
    object: 'event',
    type: 'payment_intent.succeeded',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: { id: `pi_${i}`, object: 'payment_intent', amount, currency: 'eur', customer },
    },
  });
  return { source: 'stripe', id, body };
}

function githubPush(i: number, runId: string): Delivery {
  const id = randomUUID();
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after: `${runId}${i}`.padEnd(40, '0').slice(0, 40),
    repository: { full_name: `acme/repo-${i % 5}` },
    commits: [{ id: `c${i}`, message: `change ${i}` }],
  });
  return { source: 'github', id, body, githubEvent: 'push' };
}

/** The deliveries of one run, poison included, in a shuffled (out-of-order) sequence. */
export function buildDeliveries(config: SenderConfig): {
  deliveries: Delivery[];
  poison: Set<string>;
} {
  const out: Delivery[] = [];
  const poison = new Set<string>();
  for (let i = 0; i < config.stripeEvents; i++) {
    out.push(stripeEvent(`evt_${config.runId}_${i}`, i, `cus_${i % 50}`, 100 + i));
  }
  for (let i = 0; i < config.githubEvents; i++) out.push(githubPush(i, config.runId));
  const poisonEvents = [
    stripeEvent(`evt_${config.runId}_schema`, -1, 'cus_1', 'a lot'),
    stripeEvent(`evt_${config.runId}_blocked`, -2, 'cus_blocked', 500),
    stripeEvent(`evt_${config.runId}_flaky`, -3, 'cus_always_fails', 700),
  ];
  for (const p of config.poison === false ? [] : poisonEvents) {
    poison.add(p.id);
    out.push(p);
  }
  // Out of order: a seeded-free Fisher–Yates is enough here.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return { deliveries: out, poison };
}

async function post(
  config: SenderConfig,
  d: Delivery,
  tamper = false,
): Promise<{ status: number; retryAfter: string | null }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (d.source === 'stripe') {
    // Stripe signs every attempt anew, with the current timestamp.
    headers['stripe-signature'] = stripe.webhooks.generateTestHeaderString({
      payload: d.body,
      secret: config.stripeSecret,
    });
  } else {
    headers['x-github-delivery'] = d.id;
    headers['x-github-event'] = d.githubEvent ?? 'push';
    headers['x-hub-signature-256'] = await signGithub(config.githubSecret, d.body);
  }
  const body = tamper ? `${d.body} ` : d.body;
  const res = await fetch(`${config.receiverUrl}/webhooks/${d.source}`, {
    method: 'POST',
    headers,
    body,
  });
  await res.arrayBuffer();
  return { status: res.status, retryAfter: res.headers.get('retry-after') };
}

/**
 * Delivers everything and returns what the receiver accepted. Like a real sender it retries each
 * delivery until it gets a 2xx (with a short backoff here), and it redelivers some events anyway.
 */
export async function runSender(config: SenderConfig): Promise<SendReport> {
  const { deliveries, poison } = buildDeliveries(config);
  const accepted = new Set<string>();
  const statuses = new Map<number, number>();
  let requests = 0;

  const gaveUp = new Set<string>();
  const deliverUntilAccepted = async (d: Delivery): Promise<void> => {
    const until = Date.now() + RETRY_HORIZON_MS;
    for (let attempt = 0; ; attempt++) {
      requests++;
      const { status, retryAfter } = await post(config, d);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 200 && status < 300) {
        accepted.add(d.id);
        gaveUp.delete(d.id);
        return;
      }
      if (Date.now() > until) {
        if (!accepted.has(d.id)) gaveUp.add(d.id);
        return;
      }
      await new Promise((r) => setTimeout(r, retryDelayMs(attempt, retryAfter)));
    }
  };

  const mainWork: (() => Promise<void>)[] = [];
  const held: (() => Promise<void>)[] = [];
  deliveries.forEach((d, i) => {
    const work = config.poisonAfter && poison.has(d.id) ? held : mainWork;
    work.push(() => deliverUntilAccepted(d));
    if (i % 5 === 0) work.push(() => deliverUntilAccepted(d)); // a later redelivery
    if (i % 10 === 0)
      work.push(() =>
        Promise.all([deliverUntilAccepted(d), deliverUntilAccepted(d)]).then(() => {}),
      ); // concurrent retries
    if (i % 97 === 0) {
      // A forged delivery: must be refused with 401 and never accepted.
      work.push(async () => {
        requests++;
        const { status } = await post(config, d, true);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      });
    }
  });

  const runAll = async (work: (() => Promise<void>)[]): Promise<void> => {
    let next = 0;
    const lanes = Array.from({ length: config.concurrency }, async () => {
      while (next < work.length) {
        const job = work[next++]!;
        await job();
      }
    });
    await Promise.all(lanes);
  };
  await runAll(mainWork);
  if (held.length > 0) {
    await config.poisonAfter?.();
    await runAll(held);
  }
  return { requests, accepted, statuses, poison, gaveUp };
}
