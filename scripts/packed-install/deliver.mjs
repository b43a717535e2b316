// What the checks in this folder share: Stripe deliveries signed with Stripe's own SDK, a free port,
// and waiting on a condition with a deadline.
import net from 'node:net';
import Stripe from 'stripe';

export const stripeSecret = 'whsec_packed_install_check';
const stripe = new Stripe('sk_test_packed_install_check');

/** A `payment_intent.succeeded` event as Stripe sends it (the fields the handlers read). */
export function paymentSucceeded(id, amount) {
  return {
    id,
    object: 'event',
    type: 'payment_intent.succeeded',
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: `pi_${id}`, object: 'payment_intent', amount, currency: 'eur' } },
  };
}

/** POSTs `event` to the receiver at `port`, signed anew as Stripe does on every attempt; the status. */
export async function deliver(port, event) {
  const payload = JSON.stringify(event);
  const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: stripeSecret });
  const res = await fetch(`http://127.0.0.1:${port}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
  });
  await res.arrayBuffer();
  return res.status;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** Resolves once `check()` is truthy; rejects naming `what` after `ms`. */
export async function waitFor(what, check, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function assertEqual(actual, expected, what) {
  if (actual !== expected) throw new Error(`${what}: expected ${expected}, got ${actual}`);
}
