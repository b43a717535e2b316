import { createHmac, randomBytes } from 'node:crypto';
import type { LoadRequest } from '../../core/bench/load.js';

export const STRIPE_SECRET = 'whsec_bench_secret';

/**
 * The i-th signed Stripe delivery of one run: a fresh event id each time (every request is a
 * first sight, the expensive path), signed as Stripe signs (`t.body`, HMAC-SHA256, hex).
 */
export function stripeRequests(path: string): (i: number) => LoadRequest {
  const run = randomBytes(4).toString('hex');
  return (i) => {
    const t = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      id: `evt_${run}_${i}`,
      object: 'event',
      type: 'charge.succeeded',
      created: t,
      data: {
        object: {
          id: `ch_${run}_${i}`,
          object: 'charge',
          customer: `cus_${i % 100}`,
          amount: 4200,
        },
      },
    });
    const v1 = createHmac('sha256', STRIPE_SECRET).update(`${t}.${body}`).digest('hex');
    return {
      path,
      headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${v1}` },
      body,
    };
  };
}
