import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createMemoryTransport } from '@onceflow/core/testing';
import { createReceiver, stripe } from '@onceflow/core';
import type pg from 'pg';
import { createPostgresInbox, type PostgresInboxConfig } from '../src/index.js';
import { STRIPE_SECRET } from './stripe-requests.js';

const TOLERANCE_SEC = 300;

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Stripe's check, written by hand: t and v1 from the header, HMAC over `t.body`, 300 s tolerance. */
function stripeSignatureOk(header: string | undefined, body: Buffer): boolean {
  if (header === undefined) return false;
  const parts = new Map(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1');
  if (!Number.isFinite(t) || v1 === undefined) return false;
  if (Math.abs(Date.now() / 1000 - t) > TOLERANCE_SEC) return false;
  const expected = createHmac('sha256', STRIPE_SECRET).update(`${t}.`).update(body).digest();
  const given = Buffer.from(v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The baselines: what a careful hand-written endpoint does. Verify, parse the id, one
 * `INSERT … ON CONFLICT DO NOTHING` into a plain table, 202 (200 for a duplicate). With
 * `markEnqueued`, a new id's row is then marked handed on (`UPDATE … SET enqueued_at = now()`),
 * the second write a receiver that claims before it enqueues makes: the row says whether the
 * event still has to be sent on. That UPDATE changes no indexed column.
 */
export function baselineServer(
  pool: pg.Pool,
  table: string,
  options: { readonly markEnqueued: boolean },
): Server {
  return createServer((req, res) => {
    void (async () => {
      try {
        const body = await readBody(req);
        if (!stripeSignatureOk(req.headers['stripe-signature'] as string | undefined, body)) {
          res.writeHead(401).end();
          return;
        }
        const { id } = JSON.parse(body.toString('utf8')) as { id: string };
        const r = await pool.query({
          name: 'baseline_insert',
          text: `INSERT INTO ${table} (id, body) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
          values: [id, body.toString('utf8')],
        });
        if (r.rowCount === 1 && options.markEnqueued) {
          await pool.query({
            name: 'baseline_enqueued',
            text: `UPDATE ${table} SET enqueued_at = now() WHERE id = $1`,
            values: [id],
          });
        }
        res.writeHead(r.rowCount === 1 ? 202 : 200).end();
      } catch {
        res.writeHead(503).end();
      }
    })();
  });
}

/**
 * onceflow: the receiver with the Stripe verifier, this PostgreSQL inbox (batching on, as by
 * default, or off), the memory transport.
 */
export function receiverServer(
  pool: pg.Pool,
  schema: string,
  options: Pick<PostgresInboxConfig, 'batching'>,
): Server {
  const receiver = createReceiver({
    sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
    inbox: createPostgresInbox({ pool, schema, batching: options.batching }),
    transport: createMemoryTransport({ dedupeWindowMs: false }),
  });
  return createServer(receiver.nodeHandler('stripe'));
}
