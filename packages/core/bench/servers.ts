/**
 * The servers the receiver benchmark compares, each started alone in a child process (so the
 * load generator never shares its event loop): `node --import tsx bench/servers.ts <kind>`.
 * The child answers the parent with `{ port }` once listening and exits when the parent does.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
  createServer,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createMemoryStore } from '../src/memory/store.js';
import { createMemoryTransport } from '../src/memory/transport.js';
import { createMetrics } from '../src/observability/metrics.js';
import { type Receiver, createReceiver } from '../src/receiver/index.js';
import { stripe } from '../src/verify/stripe.js';
import { noopInbox } from './noop-inbox.js';

export const BENCH_SECRET = 'whsec_bench_secret';

export const SERVER_KINDS = [
  'bare',
  'hmac',
  'hmac + map',
  'receiver',
  'receiver, no-op stores',
  'receiver+metrics',
  'receiver via hono',
  'receiver via hono, fetch',
  'hono + hmac',
  'hono + hmac + stores',
] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

const readBody = (req: IncomingMessage, done: (body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => done(Buffer.concat(chunks)));
};

const answer = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
};

/** (a) No work: read the body, answer 202. */
const bare: RequestListener = (req, res) =>
  readBody(req, () => answer(res, 202, '{"status":"accepted"}'));

/**
 * (b) The hand-written twin: the Stripe scheme checked by hand (t + v1 hex HMAC-SHA256 over
 * `t.body`, constant-time compare, 300 s tolerance), then the event id read from the JSON body,
 * as any real handler must before it can do anything with the event.
 */
const hmac: RequestListener = (req, res) =>
  readBody(req, (body) => {
    const id = verifiedId(req.headers['stripe-signature'], body);
    if (id === undefined) return answer(res, 401, '{"status":"unauthorized"}');
    answer(res, 202, JSON.stringify({ status: 'accepted', id }));
  });

/** The twin's check: the event id of a body whose Stripe signature holds, else undefined. */
function verifiedId(header: string | string[] | undefined, body: Buffer): string | undefined {
  return verifiedBody(header, body)?.id;
}

/** The twin's check: the parsed body whose Stripe signature holds, else undefined. */
function verifiedBody(header: string | string[] | undefined, body: Buffer): StripeBody | undefined {
  let t = Number.NaN;
  const v1: Buffer[] = [];
  for (const part of String(header ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (part.slice(0, eq) === 't') t = Number(part.slice(eq + 1));
    else if (part.slice(0, eq) === 'v1') v1.push(Buffer.from(part.slice(eq + 1), 'hex'));
  }
  const expected = createHmac('sha256', BENCH_SECRET).update(`${t}.`).update(body).digest();
  const ok = v1.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected));
  if (!ok || Math.abs(Date.now() / 1000 - t) > 300) return undefined;
  return JSON.parse(body.toString('utf8')) as StripeBody;
}

interface StripeBody {
  readonly id: string;
  readonly type: string;
  readonly created: number;
  readonly data: { readonly object: { readonly id: string; readonly customer?: string } };
}

/**
 * (b') The twin keeping what the memory stores keep at the least: each accepted event's id with
 * its body (a queue's copy of the message, for a consumer), in one map; a known id is answered
 * 200 duplicate. Nothing is ever removed, as in (c) with no consumer and no janitor.
 */
function hmacWithMap(): RequestListener {
  const kept = new Map<string, { body: string; receivedAt: number }>();
  return (req, res) =>
    readBody(req, (body) => {
      const id = verifiedId(req.headers['stripe-signature'], body);
      if (id === undefined) return answer(res, 401, '{"status":"unauthorized"}');
      if (kept.has(id)) return answer(res, 200, JSON.stringify({ status: 'duplicate', id }));
      kept.set(id, { body: body.toString('latin1'), receivedAt: Date.now() });
      answer(res, 202, JSON.stringify({ status: 'accepted', id }));
    });
}

/** (c) The receiver: Stripe verifier, memory store (inbox and event record), memory transport (keeps every message: no consumer). */
function receiver(options: { metrics?: boolean; noopStores?: boolean } = {}): Receiver {
  return createReceiver({
    sources: { stripe: stripe({ secrets: [BENCH_SECRET] }) },
    inbox: options.noopStores ? noopInbox : createMemoryStore(),
    transport: options.noopStores ? { publish: async () => {} } : createMemoryTransport(),
    metrics: options.metrics ? createMetrics() : undefined,
  });
}

/**
 * The hand-written Hono route doing the receiver's store calls: the twin's check, an envelope made
 * by hand (sha-256 of the body for the conflict check), then claim → publish → markEnqueued on
 * the memory store and transport, answering 200 for a duplicate and 202 once published.
 */
function honoWithStores(): Hono {
  const inbox = createMemoryStore();
  const transport = createMemoryTransport();
  const app = new Hono();
  app.post('/webhooks/:source', async (c) => {
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const event = verifiedBody(c.req.header('stripe-signature'), body);
    if (event === undefined) return c.json({ status: 'unauthorized' }, 401);
    const { id } = event;
    const envelope = {
      id,
      source: c.req.param('source'),
      type: event.type,
      key: event.data.object.customer ?? event.data.object.id,
      payload: bytes,
      headers: { 'content-type': c.req.header('content-type') ?? 'application/json' },
      receivedAt: new Date().toISOString(),
      occurredAt: new Date(event.created * 1000).toISOString(),
      payloadHash: createHash('sha256').update(bytes).digest('hex'),
    };
    const claim = await inbox.claim(envelope, { leaseMs: 30_000 });
    if (claim.status !== 'new') return c.json({ status: 'duplicate', id }, 200);
    await transport.publish([{ envelope }]);
    await inbox.markEnqueued(envelope.source, id, claim.token);
    return c.json({ status: 'accepted', id }, 202);
  });
  return app;
}

function listen(kind: ServerKind): Promise<number> {
  if (kind === 'hono + hmac + stores') {
    const app = honoWithStores();
    return new Promise((resolve) => {
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
    });
  }
  if (kind === 'receiver via hono' || kind === 'receiver via hono, fetch') {
    const r = receiver();
    const app = new Hono();
    // The README's one-liner, and the fetch entry on the request Hono hands over.
    if (kind === 'receiver via hono') app.post('/webhooks/:source', (c) => r.hono(c));
    else app.post('/webhooks/:source', (c) => r.fetch(c.req.raw, c.req.param('source')));
    return new Promise((resolve) => {
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
    });
  }
  if (kind === 'hono + hmac') {
    // The hand-written Hono route: the twin's check on the body Hono hands over.
    const app = new Hono();
    app.post('/webhooks/:source', async (c) => {
      const body = Buffer.from(await c.req.arrayBuffer());
      const id = verifiedId(c.req.header('stripe-signature'), body);
      if (id === undefined) return c.json({ status: 'unauthorized' }, 401);
      return c.json({ status: 'accepted', id }, 202);
    });
    return new Promise((resolve) => {
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
    });
  }
  const listener =
    kind === 'bare'
      ? bare
      : kind === 'hmac'
        ? hmac
        : kind === 'hmac + map'
          ? hmacWithMap()
          : receiver({
              metrics: kind === 'receiver+metrics',
              noopStores: kind === 'receiver, no-op stores',
            }).nodeHandler();
  const server = createServer({ keepAliveTimeout: 60_000 }, listener);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

const kind = process.argv[2] as ServerKind | undefined;
if (kind && process.send) {
  if (!SERVER_KINDS.includes(kind)) throw new Error(`unknown server kind ${kind}`);
  const port = await listen(kind);
  process.send({ port });
  // The parent asks for this process's CPU time (µs) around each measured round.
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpuUs: user + system });
  });
  process.on('disconnect', () => process.exit(0));
}
