import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ReceiverConfig, resolveReceiverConfig } from './config.js';
import { fromFetch, pathOf, toResponse } from './fetch.js';
import { type RequestRoute, routeOf } from './route.js';
import { createRequestGate } from './drain.js';
import { createHandler } from './handle.js';
import { type HonoContext, unreadNodeRequest } from './hono.js';
import { fromNode, writeNode } from './node.js';
import { type NodeServerOptions, nodeServerOptions } from './server-options.js';
import { assertRetentionCovers } from './retention.js';
import { withClaimCheck } from './claim-check.js';

export type { ReceiverConfig, ReceiverTransport } from './config.js';
export type { HonoContext } from './hono.js';
export type { NodeServerOptions } from './server-options.js';
export { KEPT_HEADERS, TENANT_HEADER } from './headers.js';
export {
  createRetentionJanitor,
  type RetentionJanitor,
  type RetentionJanitorOptions,
} from './janitor.js';
export type { ReceiveOutcome } from './reply.js';
export { assertRetentionCovers, DEFAULT_INBOX_RETENTION_MS } from './retention.js';

/**
 * The webhook endpoint. Stateless apart from its config and its drain flag: any number of
 * requests may run concurrently, on any number of processes sharing one inbox. It holds nothing
 * to close: `drain()` it, stop your HTTP server, then whoever created the inbox and the transport
 * closes them (`drainOnSignal` does all of it in that order).
 */
export interface Receiver {
  /**
   * Answers a Fetch API request (Hono, Bun, Deno, workers). `source` defaults to the last path
   * segment (`POST /webhooks/stripe` → `stripe`), or with `pathPrefix` to the segment after it
   * (`POST /webhooks/stripe/acme` → `stripe`, tenant `acme`). Never rejects.
   */
  fetch(request: Request, source?: string): Promise<Response>;
  /**
   * Answers a Hono request: `app.post('/webhooks/:source', (c) => receiver.hono(c))`, with
   * `source` and the tenant found as `fetch` finds them. The same answers as `fetch(c.req.raw)`;
   * on `@hono/node-server` it reads the node request (`c.env.incoming`) itself, as `node` does,
   * instead of the web `Request` and web stream Hono's node adapter would build for its body.
   * Never rejects.
   */
  hono(c: HonoContext, source?: string): Promise<Response>;
  /**
   * Answers a node:http request (also Express, and Fastify's `request.raw`/`reply.raw`). The body
   * must not have been consumed by a body parser. Resolves once the answer is written; never rejects.
   */
  node(req: IncomingMessage, res: ServerResponse, source?: string): Promise<void>;
  /** A `(req, res)` listener for `http.createServer`, for one source or routed by path. */
  nodeHandler(source?: string): (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * Options for `http.createServer(options, listener)` that enforce `headersTimeoutMs` (408 and the
   * socket closed when the headers are late); pass them wherever the node:http server is made
   * (Express: `http.createServer(receiver.serverOptions, app)`; Fastify: its `serverFactory`).
   */
  readonly serverOptions: NodeServerOptions;
  /**
   * Stops accepting: from now on every webhook is answered 503 `draining` with `Retry-After`
   * (the sender retries, on another instance); resolves once the requests already in flight have
   * been answered. Idempotent and final.
   */
  drain(): Promise<void>;
  /** True once `drain()` was called (readiness probes then report not ready). */
  readonly draining: boolean;
  /** Webhook requests being answered right now. */
  readonly inFlight: number;
}

/**
 * Validates the config (throws `ConfigError`), refuses an inbox retention shorter than a source's
 * retry horizon, and returns the receiver. No I/O happens here.
 *
 * @example
 * const receiver = createReceiver({
 *   sources: { stripe: stripe({ secrets: [process.env.STRIPE_WEBHOOK_SECRET!] }) },
 *   inbox,
 *   transport,
 * });
 * http.createServer(receiver.serverOptions, receiver.nodeHandler()).listen(3000); // POST /webhooks/stripe
 */
export function createReceiver(config: ReceiverConfig): Receiver {
  const cfg = withClaimCheck(resolveReceiverConfig(config));
  assertRetentionCovers({ retentionMs: cfg.inboxRetentionMs, sources: cfg.sources });
  const gate = createRequestGate();
  const handleRequest = createHandler(cfg, () => gate.draining);
  /** One request's answer, counted in flight until it is there. */
  const answerOf = async (route: RequestRoute, unread: Parameters<typeof handleRequest>[1]) => {
    gate.enter();
    try {
      return await handleRequest(route, unread);
    } finally {
      gate.leave();
    }
  };

  /** The path's source and tenant; an explicit `source` argument names the source. */
  const routeFor = (path: string, source: string | undefined): RequestRoute => {
    const route = routeOf(path, cfg.pathPrefix);
    return source === undefined ? route : { source, tenant: route.tenant };
  };

  // Only a bug or a reply the runtime refuses (a handshake header it rejects) lands here: the
  // sender still gets an answer, and nothing was acknowledged.
  const broken = (err: unknown) => cfg.logger.error({ err }, 'receiver failed to answer');

  const answerFetch = async (request: Request, source?: string) => {
    try {
      const route = routeFor(pathOf(request.url), source);
      return toResponse(await answerOf(route, fromFetch(request)));
    } catch (err) {
      broken(err);
      return new Response(null, { status: 500 });
    }
  };

  const node = async (req: IncomingMessage, res: ServerResponse, source?: string) => {
    try {
      writeNode(req, res, await answerOf(routeFor(req.url ?? '', source), fromNode(req)));
    } catch (err) {
      broken(err);
      if (!res.headersSent) res.writeHead(500).end();
    }
  };
  return {
    fetch: answerFetch,
    async hono(c, source) {
      const req = unreadNodeRequest(c.env);
      if (req === undefined) return answerFetch(c.req.raw, source);
      try {
        const reply = await answerOf(routeFor(req.url ?? '', source), fromNode(req));
        // As `writeNode` does: a body not read to its end (404, 413) ends the connection.
        return toResponse(reply, !req.complete);
      } catch (err) {
        broken(err);
        return new Response(null, { status: 500 });
      }
    },
    node,
    serverOptions: nodeServerOptions(cfg),
    nodeHandler(source) {
      return (req, res) => void node(req, res, source);
    },
    drain: () => gate.drain(),
    get draining() {
      return gate.draining;
    },
    get inFlight() {
      return gate.inFlight;
    },
  };
}
