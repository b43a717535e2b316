import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { Webhook } from 'svix';
import type { Source } from '../../src/contracts/source.js';
import { github } from '../../src/verify/github.js';
import { hmac } from '../../src/verify/hmac.js';
import { shopify } from '../../src/verify/shopify.js';
import { slack } from '../../src/verify/slack.js';
import { standardWebhooks } from '../../src/verify/standard-webhooks.js';
import { stripe } from '../../src/verify/stripe.js';

/** One HMAC-style sender: its factory, a fresh secret, and a signed delivery as the sender makes it. */
export interface Sender {
  readonly name: string;
  readonly build: (secrets: readonly string[]) => Source;
  readonly secret: () => string;
  /** A new event: body, headers signed with `secret`, and the event id the verifier reads. */
  readonly deliver: (
    secret: string,
    extraBody?: Record<string, unknown>,
  ) => { body: string; headers: Record<string, string>; id: string };
}

const hex = (secret: string, ...parts: string[]) => {
  const mac = createHmac('sha256', secret);
  for (const p of parts) mac.update(p);
  return mac.digest('hex');
};
const now = () => Math.floor(Date.now() / 1000);
const json = { 'content-type': 'application/json' };

export const SENDERS: readonly Sender[] = [
  {
    name: 'stripe',
    build: (secrets) => stripe({ secrets }),
    secret: () => `whsec_${randomBytes(16).toString('hex')}`,
    deliver(secret, extra = {}) {
      const id = `evt_${randomUUID()}`;
      const body = JSON.stringify({ id, type: 'invoice.paid', created: now(), data: {}, ...extra });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
      return { id, body, headers: { ...json, 'stripe-signature': signature } };
    },
  },
  {
    name: 'github',
    build: (secrets) => github({ secrets }),
    secret: () => randomBytes(16).toString('hex'),
    deliver(secret, extra = {}) {
      const id = randomUUID();
      const body = JSON.stringify({ action: 'opened', ...extra });
      const headers = {
        ...json,
        'x-github-delivery': id,
        'x-github-event': 'issues',
        'x-hub-signature-256': `sha256=${hex(secret, body)}`,
      };
      return { id, body, headers };
    },
  },
  {
    name: 'slack',
    build: (secrets) => slack({ secrets }),
    secret: () => randomBytes(16).toString('hex'),
    deliver(secret, extra = {}) {
      const id = `Ev${randomUUID()}`;
      const body = JSON.stringify({
        event_id: id,
        type: 'event_callback',
        event: { type: 'message' },
        ...extra,
      });
      const t = String(now());
      const headers = {
        ...json,
        'x-slack-request-timestamp': t,
        'x-slack-signature': `v0=${hex(secret, `v0:${t}:`, body)}`,
      };
      return { id, body, headers };
    },
  },
  {
    name: 'shopify',
    build: (secrets) => shopify({ secrets }),
    secret: () => randomBytes(16).toString('hex'),
    deliver(secret, extra = {}) {
      const id = randomUUID();
      const body = JSON.stringify({ id: 1, ...extra });
      const headers = {
        ...json,
        'x-shopify-hmac-sha256': createHmac('sha256', secret).update(body).digest('base64'),
        'x-shopify-topic': 'orders/create',
        'x-shopify-event-id': id,
      };
      return { id, body, headers };
    },
  },
  {
    name: 'standard-webhooks',
    build: (secrets) => standardWebhooks({ secrets }),
    secret: () => `whsec_${randomBytes(24).toString('base64')}`,
    deliver(secret, extra = {}) {
      const id = `msg_${randomUUID()}`;
      const at = new Date();
      const body = JSON.stringify({ type: 'invoice.paid', ...extra });
      const headers = {
        ...json,
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, at, body),
      };
      return { id, body, headers };
    },
  },
  {
    name: 'hmac',
    build: (secrets) => hmac({ secrets, header: 'x-signature', eventIdField: 'id' }),
    secret: () => randomBytes(16).toString('hex'),
    deliver(secret, extra = {}) {
      const id = randomUUID();
      const body = JSON.stringify({ id, ...extra });
      return { id, body, headers: { ...json, 'x-signature': hex(secret, body) } };
    },
  },
];
