import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import Stripe from 'stripe';

export const STRIPE_SECRET = 'whsec_test_receiver';

/** A node:http server on a free loopback port; `await using` closes it (and its keep-alive sockets). */
export async function listen(
  listener: RequestListener,
  options: ServerOptions = {},
): Promise<{
  readonly url: string;
  readonly server: Server;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const server = createServer(options, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A Stripe event body as Stripe sends it (trimmed). */
export function stripeEvent(id: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id,
    object: 'event',
    type: 'payment_intent.succeeded',
    created: Math.floor(Date.now() / 1000) - 2,
    data: { object: { id: 'pi_1', object: 'payment_intent', customer: 'cus_1', amount: 4200 } },
    ...extra,
  });
}

/** Headers for a Stripe delivery, signed with Stripe's own test helper. */
export function stripeHeaders(
  body: string,
  options: { secret?: string; timestamp?: number } = {},
): Record<string, string> {
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: options.secret ?? STRIPE_SECRET,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
  });
  return { 'content-type': 'application/json', 'stripe-signature': signature };
}

/** POSTs a signed Stripe event and returns status, parsed JSON body and headers. */
export async function postStripe(
  url: string,
  body: string,
  options: { secret?: string; timestamp?: number; headers?: Record<string, string> } = {},
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...stripeHeaders(body, options), ...options.headers },
    body,
  });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

/** Polls `check` until it returns true or the deadline passes. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Sends a request head on a raw socket, then `chunk` again and again (chunked encoding) until the
 * server answers, if `stream` is set. Resolves with the answer's head and the bytes sent.
 */
export function rawPost(
  origin: string,
  head: string,
  stream?: Buffer,
): Promise<{ head: string; sent: number; closedByServer: Promise<void> }> {
  const { port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    let answered = false;
    let sent = 0;
    let received = '';
    const closedByServer = new Promise<void>((r) => socket.on('close', () => r()));
    socket.on('error', (err) => {
      if (!answered) reject(err);
    });
    socket.on('data', (d) => {
      received += d.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end === -1 || answered) return;
      answered = true;
      resolve({ head: received.slice(0, end).toLowerCase(), sent, closedByServer });
    });
    socket.write(`${head}\r\n`);
    if (!stream) return;
    const frame = Buffer.concat([
      Buffer.from(`${stream.length.toString(16)}\r\n`),
      stream,
      Buffer.from('\r\n'),
    ]);
    const pump = () => {
      while (!answered && !socket.destroyed) {
        sent += stream.length;
        if (!socket.write(frame)) return void socket.once('drain', pump);
      }
    };
    pump();
  });
}

/** A request head from its lines (the blank line is added by `rawPost`). */
export const rawHead = (lines: string[]) => `${lines.join('\r\n')}\r\n`;

/**
 * A client on a real socket that writes `pieces` one by one, `everyMs` apart, and records what
 * comes back. `closed` resolves when the socket closes, with what was received and whether the
 * client still had pieces to send (then the server closed it).
 */
export function slowClient(port: number, pieces: readonly (string | Buffer)[], everyMs: number) {
  const socket = connect({ host: '127.0.0.1', port });
  let received = '';
  let sent = 0;
  socket.on('data', (d) => {
    received += d.toString('latin1');
  });
  socket.on('error', () => {});
  const timer = setInterval(() => {
    if (sent >= pieces.length || socket.destroyed) return clearInterval(timer);
    socket.write(pieces[sent++]!);
  }, everyMs);
  const closed = new Promise<{ received: string; unsent: number }>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ received, unsent: pieces.length - sent });
    }),
  );
  return { closed, received: () => received, destroy: () => socket.destroy() };
}
