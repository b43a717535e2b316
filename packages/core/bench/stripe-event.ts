import { createHmac, randomBytes } from 'node:crypto';
import { BENCH_SECRET } from './servers.js';

const filler = randomBytes(300).toString('hex');

/** A ~1.3 KB Stripe event with a unique id, signed as Stripe signs it, as the benches send it. */
export function signedEvent(tag: string, i: number) {
  const created = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    id: `evt_${tag}_${i}`,
    object: 'event',
    api_version: '2025-06-30',
    created,
    type: 'payment_intent.succeeded',
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${i}`, idempotency_key: null },
    data: {
      object: {
        id: `pi_${i}`,
        object: 'payment_intent',
        amount: 4200,
        currency: 'eur',
        customer: `cus_${i % 97}`,
        status: 'succeeded',
        metadata: { order: `ord_${i}`, note: filler },
      },
    },
  });
  const v1 = createHmac('sha256', BENCH_SECRET).update(`${created}.${body}`).digest('hex');
  return {
    path: '/webhooks/stripe',
    headers: { 'content-type': 'application/json', 'stripe-signature': `t=${created},v1=${v1}` },
    body,
  };
}
