/**
 * The receive path's CPU per request in this process, with and without prom-client metrics: the
 * receiver's handler called directly (no HTTP, no-op stores), batches interleaved, medians. Over
 * HTTP a round's CPU per request moves by tens of µs with the machine's load; this isolates what
 * the metrics calls themselves cost, which is far smaller.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createMetrics } from '../src/observability/metrics.js';
import { resolveReceiverConfig } from '../src/receiver/config.js';
import { createHandler } from '../src/receiver/handle.js';
import type { UnreadRequest } from '../src/receiver/incoming.js';
import { stripe } from '../src/verify/stripe.js';
import { noopInbox } from './noop-inbox.js';

/** The route of every request: the stripe source, no tenant. */
const STRIPE = { source: 'stripe', tenant: undefined };

/** `count` signed Stripe requests (~1.3 KB) with distinct ids, their bodies already read. */
function signedRequests(secret: string, count: number): UnreadRequest[] {
  const filler = randomBytes(300).toString('hex');
  const created = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, (_, i) => {
    const body = Buffer.from(
      JSON.stringify({
        id: `evt_cost_${i}`,
        object: 'event',
        created,
        type: 'payment_intent.succeeded',
        data: { object: { id: `pi_${i}`, amount: 4200, metadata: { note: filler } } },
      }),
    );
    const v1 = createHmac('sha256', secret).update(`${created}.`).update(body).digest('hex');
    return {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': `t=${created},v1=${v1}` },
      contentLength: body.length,
      url: () => new URL('http://127.0.0.1/webhooks/stripe'),
      readBody: async () => body,
    };
  });
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** Median CPU µs per request of the handler without and with `createMetrics()`. */
export async function metricsCostPerRequest(
  secret: string,
  options: { rounds?: number; batch?: number } = {},
): Promise<{ withoutUs: number; withUs: number }> {
  const { rounds = 9, batch = 10_000 } = options;
  const handler = (metrics: boolean) =>
    createHandler(
      resolveReceiverConfig({
        sources: { stripe: stripe({ secrets: [secret] }) },
        inbox: noopInbox,
        transport: { publish: async () => {} },
        metrics: metrics ? createMetrics() : undefined,
      }),
    );
  const sides = [
    { handle: handler(false), us: [] as number[] },
    { handle: handler(true), us: [] as number[] },
  ];
  const requests = signedRequests(secret, 1_000);
  for (let r = -1; r < rounds; r++) {
    // Alternate which side goes first; round -1 warms both up and is not counted.
    for (const side of r % 2 ? sides : [...sides].reverse()) {
      const start = process.cpuUsage();
      for (let i = 0; i < batch; i++) {
        const answer = await side.handle(STRIPE, requests[i % requests.length]!);
        if (answer.outcome !== 'accepted') throw new Error(`handler answered ${answer.outcome}`);
      }
      const { user, system } = process.cpuUsage(start);
      if (r >= 0) side.us.push((user + system) / batch);
    }
  }
  return { withoutUs: median(sides[0]!.us), withUs: median(sides[1]!.us) };
}
