import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import {
  createReceiver,
  github,
  hmac,
  msgraph,
  type Source,
  slack,
  standardWebhooks,
  stripe,
} from '@onceflow/core';
import { createMemoryStore, createMemoryTransport } from '@onceflow/core/testing';
import fc from 'fast-check';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * Properties of the receive path over generated requests: signed right or wrong (each sender's own
 * SDK signs where it has one), any bytes, encodings, sizes around the limit, chunked any way, with
 * noise headers and any method. Whatever comes in:
 *
 * - the answer is one of the documented statuses, never a crash (500);
 * - no 2xx without a valid signature (a Graph `validationToken` handshake aside, which writes nothing);
 * - no inbox or broker call for a request that did not verify, and none before verification;
 * - a body over `maxBodyBytes` is answered 413 and read only a chunk past the limit;
 * - a well-formed signed event is accepted (202), so the properties are not vacuous.
 */

const LIMIT = 2048;
const NOW = new Date();
const SECONDS = Math.floor(NOW.getTime() / 1000);
const DOCUMENTED = [200, 202, 400, 401, 404, 405, 408, 413, 503];

const SECRET = 'prop-secret';
const WRONG = 'prop-wrong-secret';
const WHSEC = `whsec_${Buffer.from('prop-standard-webhooks-key-0123').toString('base64')}`;
const WHSEC_WRONG = `whsec_${Buffer.from('prop-standard-webhooks-key-9999').toString('base64')}`;
const CLIENT_STATE = 'prop-client-state';

type Mode = 'valid' | 'none' | 'garbage' | 'wrong-secret' | 'other-body' | 'stale';
type SourceName = 'stripe' | 'github' | 'slack' | 'standard' | 'svix' | 'hmac' | 'graph';
type Encoding = 'utf8' | 'utf16le' | 'latin1' | 'gzip';

interface Signing {
  readonly bytes: Buffer;
  /** The UTF-8 text the bytes encode, when they are plain UTF-8: then the sender's SDK signs. */
  readonly text: string | undefined;
  readonly id: string;
  readonly mode: Mode;
  readonly garbage: string;
}

const hex = (key: string | Buffer, ...parts: (string | Buffer)[]) => {
  const mac = createHmac('sha256', key);
  for (const p of parts) mac.update(p);
  return mac.digest();
};
const whsecKey = (s: string) => Buffer.from(s.slice('whsec_'.length), 'base64');

/** What is signed and with what: the mode decides secret, bytes and time. */
function material(s: Signing) {
  const wrong = s.mode === 'wrong-secret';
  const bytes = s.mode === 'other-body' ? Buffer.concat([s.bytes, Buffer.from(' ')]) : s.bytes;
  const text = s.mode === 'other-body' || s.text === undefined ? undefined : s.text;
  const ts = s.mode === 'stale' ? SECONDS - 3_600 : SECONDS;
  return { wrong, bytes, text, ts };
}

/** The signature headers (and id headers) of one sender, per mode. */
const signers: Record<
  Exclude<SourceName, 'graph'>,
  (s: Signing) => Promise<Record<string, string>>
> = {
  async stripe(s) {
    const { wrong, bytes, text, ts } = material(s);
    const secret = wrong ? WRONG : SECRET;
    const signature =
      text === undefined
        ? `t=${ts},v1=${hex(secret, `${ts}.`, bytes).toString('hex')}`
        : Stripe.webhooks.generateTestHeaderString({ payload: text, secret, timestamp: ts });
    return { 'stripe-signature': signature };
  },
  async github(s) {
    const { wrong, bytes, text } = material(s);
    const secret = wrong || s.mode === 'stale' ? WRONG : SECRET;
    const signature =
      text === undefined || text === '' // octokit signs no empty payload
        ? `sha256=${hex(secret, bytes).toString('hex')}`
        : await octokitSign(secret, text);
    return {
      'x-hub-signature-256': signature,
      'x-github-delivery': s.id,
      'x-github-event': 'issues',
    };
  },
  async slack(s) {
    const { wrong, bytes, ts } = material(s);
    const secret = wrong ? WRONG : SECRET;
    return {
      'x-slack-signature': `v0=${hex(secret, `v0:${ts}:`, bytes).toString('hex')}`,
      'x-slack-request-timestamp': String(ts),
    };
  },
  standard: (s) => standardHeaders(s, 'webhook', StandardWebhook),
  svix: (s) => standardHeaders(s, 'svix', SvixWebhook),
  async hmac(s) {
    const { wrong, bytes } = material(s);
    return {
      'x-signature': hex(wrong || s.mode === 'stale' ? WRONG : SECRET, bytes).toString('hex'),
    };
  },
};

async function standardHeaders(
  s: Signing,
  prefix: 'webhook' | 'svix',
  Sdk: typeof StandardWebhook | typeof SvixWebhook,
): Promise<Record<string, string>> {
  const { wrong, bytes, text, ts } = material(s);
  const secret = wrong ? WHSEC_WRONG : WHSEC;
  const signature =
    text === undefined
      ? `v1,${hex(whsecKey(secret), `${s.id}.${ts}.`, bytes).toString('base64')}`
      : new Sdk(secret).sign(s.id, new Date(ts * 1000), text);
  return {
    [`${prefix}-id`]: s.id,
    [`${prefix}-timestamp`]: String(ts),
    [`${prefix}-signature`]: signature,
  };
}

/** A well-formed event body for each sender, `note` carrying arbitrary text and padding. */
function eventBody(source: SourceName, id: string, note: string, valid: boolean): string {
  switch (source) {
    case 'stripe':
      return JSON.stringify({
        id,
        object: 'event',
        type: 'charge.succeeded',
        created: SECONDS,
        note,
      });
    case 'github':
      return JSON.stringify({ action: 'opened', repository: { full_name: 'o/r' }, note });
    case 'slack':
      return JSON.stringify({
        type: 'event_callback',
        event_id: id,
        event: { type: 'message' },
        note,
      });
    case 'standard':
    case 'svix':
      return JSON.stringify({ type: 'invoice.paid', timestamp: NOW.toISOString(), note });
    case 'hmac':
      return JSON.stringify({ id, type: 'thing.done', note });
    case 'graph':
      return JSON.stringify({
        value: [
          {
            subscriptionId: 's1',
            clientState: valid ? CLIENT_STATE : 'not-the-client-state',
            changeType: 'updated',
            resource: `users/${id}`,
            note,
          },
        ],
      });
  }
}

const encode = (text: string, encoding: Encoding): Buffer =>
  encoding === 'gzip' ? gzipSync(Buffer.from(text, 'utf8')) : Buffer.from(text, encoding);

const token = fc.stringMatching(/^[A-Za-z0-9_]{1,16}$/);
const headerValue = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,40}$/);

/** One generated request, before it is signed. */
const requestArb = fc.record({
  source: fc.constantFrom<SourceName | 'unknown'>(
    'stripe',
    'github',
    'slack',
    'standard',
    'svix',
    'hmac',
    'graph',
    'unknown',
  ),
  method: fc.oneof(
    { arbitrary: fc.constant('POST'), weight: 8 },
    { arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'), weight: 2 },
  ),
  mode: fc.constantFrom<Mode>(
    'valid',
    'valid',
    'none',
    'garbage',
    'wrong-secret',
    'other-body',
    'stale',
  ),
  garbage: headerValue,
  kind: fc.constantFrom('event', 'event', 'event', 'bytes', 'text', 'empty'),
  id: token,
  note: fc.string({ unit: 'binary', maxLength: 64 }),
  padding: fc.oneof(
    fc.nat(64),
    fc.integer({ min: LIMIT - 200, max: LIMIT + 200 }),
    fc.nat(2 * LIMIT),
  ),
  bytes: fc.uint8Array({ maxLength: 2 * LIMIT }),
  text: fc.string({ unit: 'binary', maxLength: 2 * LIMIT }),
  encoding: fc.constantFrom<Encoding>('utf8', 'utf8', 'utf8', 'utf16le', 'latin1', 'gzip'),
  contentType: fc.constantFrom(
    undefined,
    'application/json',
    'application/json; charset=utf-16',
    'text/plain',
    'application/x-www-form-urlencoded',
  ),
  validationToken: fc.option(fc.oneof(fc.constant(''), token), { freq: 6 }),
  noise: fc.dictionary(fc.stringMatching(/^x-noise-[a-z0-9]{1,8}$/), headerValue, { maxKeys: 4 }),
  upperCaseNames: fc.boolean(),
  cuts: fc.array(fc.nat(), { maxLength: 6 }),
  declared: fc.oneof(
    { arbitrary: fc.constant<'exact' | 'absent'>('exact'), weight: 3 },
    { arbitrary: fc.constant<'exact' | 'absent'>('absent'), weight: 1 },
    { arbitrary: fc.nat(3 * LIMIT), weight: 1 },
  ),
});
type Generated = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

let runs = 0;

/** The request as bytes and headers, plus what the properties expect of its answer. */
async function build(g: Generated) {
  const id = `${g.id}_${++runs}`;
  const source = g.source;
  const authentic = g.mode === 'valid' && source !== 'unknown';
  let bytes: Buffer;
  let text: string | undefined;
  if (g.kind === 'event') {
    const body = eventBody(
      source === 'unknown' ? 'stripe' : source,
      id,
      g.note + 'x'.repeat(g.padding),
      authentic,
    );
    bytes = encode(body, g.encoding);
    text = g.encoding === 'utf8' ? body : undefined;
  } else if (g.kind === 'bytes') {
    bytes = Buffer.from(g.bytes);
  } else if (g.kind === 'text') {
    text = g.text;
    bytes = Buffer.from(g.text, 'utf8');
  } else {
    text = '';
    bytes = Buffer.alloc(0);
  }
  // The SDKs sign text; bytes that are not that text's UTF-8 are signed by hand, the same scheme.
  if (text !== undefined && !Buffer.from(text, 'utf8').equals(bytes)) text = undefined;

  let headers: Record<string, string> = { ...g.noise };
  if (g.contentType !== undefined) headers['content-type'] = g.contentType;
  if (g.encoding === 'gzip' && g.kind === 'event') headers['content-encoding'] = 'gzip';
  if (source !== 'unknown' && source !== 'graph' && g.mode !== 'none') {
    const signed = await signers[source]({ bytes, text, id, mode: g.mode, garbage: g.garbage });
    if (g.mode === 'garbage') {
      for (const name of Object.keys(signed)) {
        if (/signature/.test(name)) signed[name] = g.garbage;
      }
    }
    headers = { ...headers, ...signed };
  }
  if (g.upperCaseNames) {
    headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
  }
  const query =
    g.validationToken === null ? '' : `?validationToken=${encodeURIComponent(g.validationToken)}`;
  const hasBody = g.method !== 'GET' && g.method !== 'HEAD';
  const sent = hasBody ? bytes : Buffer.alloc(0);
  const handshake = source === 'graph' && g.method === 'POST' && g.validationToken !== null;
  const declaredLength =
    g.declared === 'exact' ? sent.length : g.declared === 'absent' ? undefined : g.declared;
  const tooLarge = sent.length > LIMIT || (declaredLength !== undefined && declaredLength > LIMIT);
  const wellFormed =
    authentic &&
    g.kind === 'event' &&
    g.encoding === 'utf8' &&
    g.method === 'POST' &&
    !handshake &&
    !tooLarge &&
    // GitHub's form deliveries carry the JSON in a `payload` field: a JSON body labelled a form is not one.
    !(source === 'github' && g.contentType === 'application/x-www-form-urlencoded');
  return {
    path: `/webhooks/${source}${query}`,
    method: g.method,
    headers,
    body: sent,
    declaredLength,
    expect: { source, authentic, handshake, tooLarge, wellFormed },
  };
}
type Built = Awaited<ReturnType<typeof build>>;

/** A receiver over the memory stores whose every write and every passed verification is logged, in order. */
function harness() {
  const log: string[] = [];
  const inbox = createMemoryStore();
  const transport = createMemoryTransport();
  // Every inbox and broker write, counted by a spy that logs it and calls through.
  const logWrites = <T extends object>(target: T, names: readonly (keyof T & string)[]) => {
    for (const name of names) {
      const original = (target[name] as (...a: unknown[]) => unknown).bind(target);
      vi.spyOn(target, name as never).mockImplementation(((...args: unknown[]) => {
        log.push('write');
        return original(...args);
      }) as never);
    }
  };
  logWrites(inbox, ['claim', 'markEnqueued', 'release', 'recordConflict']);
  logWrites(transport, ['publish']);
  const logged = (source: Source): Source => ({
    preset: source.preset,
    verifier: {
      ...(source.verifier.handshake ? { handshake: source.verifier.handshake } : {}),
      verify(request, now) {
        const events = source.verifier.verify(request, now);
        log.push('verified');
        return events;
      },
    },
  });
  const standard = standardWebhooks({ secrets: [WHSEC] });
  const receiver = createReceiver({
    sources: {
      stripe: logged(stripe({ secrets: [SECRET] })),
      github: logged(github({ secrets: [SECRET] })),
      slack: logged(slack({ secrets: [SECRET] })),
      standard: logged(standard),
      svix: logged(standard),
      hmac: logged(
        hmac({ secrets: [SECRET], header: 'x-signature', eventIdField: 'id', typeField: 'type' }),
      ),
      graph: logged(msgraph({ clientStates: [CLIENT_STATE] })),
    },
    inbox,
    transport,
    maxBodyBytes: LIMIT,
    now: () => NOW,
  });
  return { receiver, log };
}

/** The properties every answer must have, whatever the request. `seen` tallies the statuses. */
function check(req: Built, status: number, log: readonly string[], seen: Set<number>): void {
  const { authentic, handshake, tooLarge, wellFormed, source } = req.expect;
  seen.add(status);
  expect(DOCUMENTED, `status ${status}`).toContain(status);
  if (status >= 200 && status < 300) expect(authentic || handshake, `2xx ${status}`).toBe(true);
  const firstWrite = log.indexOf('write');
  if (firstWrite !== -1) {
    expect(authentic, 'a write for a request that did not verify').toBe(true);
    expect(log.indexOf('verified'), 'a write before verification').toBeGreaterThan(-1);
    expect(log.indexOf('verified')).toBeLessThan(firstWrite);
  }
  if (source === 'unknown') expect(status).toBe(404);
  else if (req.method !== 'POST') expect(status).toBe(405);
  else if (tooLarge) expect(status).toBe(413);
  if (wellFormed) expect(status, 'a well-formed signed event').toBe(202);
}

/** Splits bytes at the generated cut points (any number of chunks, any sizes). */
function chunks(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  if (bytes.length === 0) return [];
  const at = [...new Set(cuts.map((c) => c % bytes.length))]
    .filter((c) => c > 0)
    .sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  return out;
}

/** Every branch of the receive path was reached: the generators are not vacuous. */
const REACHED = [200, 202, 400, 401, 404, 405, 413];

describe('receive path properties (fetch adapter)', () => {
  const { receiver, log } = harness();
  const seen = new Set<number>();

  it('holds for any generated request, chunked any way', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, async (g) => {
        const req = await build(g);
        const parts = chunks(req.body, g.cuts);
        let pulled = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            const next = parts.shift();
            if (next === undefined) return controller.close();
            pulled += next.length;
            controller.enqueue(new Uint8Array(next));
          },
        });
        const headers = new Headers(req.headers);
        if (req.declaredLength !== undefined)
          headers.set('content-length', String(req.declaredLength));
        const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
        log.length = 0;
        const res = await receiver.fetch(
          new Request(`http://x${req.path}`, {
            method: req.method,
            headers,
            ...(hasBody ? { body: stream, duplex: 'half' } : {}),
          } as RequestInit),
        );
        check(req, res.status, log, seen);
        // Bounded memory: past the limit at most the chunk that crossed it was read, and the
        // stream itself queues one more ahead of the reader (its high-water mark).
        const largest = Math.max(0, ...chunks(req.body, g.cuts).map((c) => c.length));
        if (res.status === 413) expect(pulled).toBeLessThanOrEqual(LIMIT + 2 * largest);
      }),
      { numRuns: 1_000 },
    );
    expect([...seen].sort()).toEqual(expect.arrayContaining(REACHED));
  });
});

describe('receive path properties (node adapter, real sockets)', () => {
  const { receiver, log } = harness();
  const seen = new Set<number>();
  const server = createServer(receiver.serverOptions, receiver.nodeHandler());
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Sends the request in the given pieces, a tick apart; resolves with the answer's head. */
  function send(req: Built, pieces: readonly Buffer[], chunked: boolean): Promise<string> {
    const lines = [`${req.method} ${req.path} HTTP/1.1`, 'host: x'];
    for (const [name, value] of Object.entries(req.headers)) lines.push(`${name}: ${value}`);
    if (chunked) lines.push('transfer-encoding: chunked');
    else lines.push(`content-length: ${req.body.length}`);
    const framed = chunked
      ? [
          ...pieces.map((p) =>
            Buffer.concat([Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')]),
          ),
          Buffer.from('0\r\n\r\n'),
        ]
      : pieces;
    const writes = [Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), ...framed];
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port });
      let received = '';
      socket.on('error', reject);
      socket.on('data', (d) => {
        received += d.toString('latin1');
        const end = received.indexOf('\r\n\r\n');
        if (end === -1) return;
        socket.destroy();
        resolve(received.slice(0, end));
      });
      socket.on('close', () => reject(new Error(`closed without an answer: ${received}`)));
      const pump = () => {
        const next = writes.shift();
        if (next === undefined || socket.destroyed) return;
        socket.write(next, () => setImmediate(pump));
      };
      pump();
    });
  }

  it('holds for any generated request, written to the socket in any pieces', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, fc.boolean(), async (g, chunked) => {
        const req = await build({ ...g, declared: 'exact' });
        log.length = 0;
        const head = await send(req, chunks(req.body, g.cuts), chunked && req.body.length > 0);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
        check(req, status, log, seen);
        if (status === 413) expect(head.toLowerCase()).toContain('connection: close');
      }),
      { numRuns: 200 },
    );
    expect([...seen].sort()).toEqual(expect.arrayContaining(REACHED));
  });
});
