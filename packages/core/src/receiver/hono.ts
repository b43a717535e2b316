import type { IncomingMessage } from 'node:http';

/**
 * What `receiver.hono(c)` reads of a Hono `Context`: its request and its environment. Our own
 * type, so core does not depend on hono; any Hono version's `Context` fits it.
 */
export interface HonoContext {
  readonly req: { readonly raw: Request };
  /** The runtime's bindings; under `@hono/node-server` they hold node's `incoming` request. */
  readonly env?: unknown;
}

/**
 * The node:http request under `@hono/node-server` (`c.env.incoming`), when nothing has started
 * reading its body yet: the receiver then reads it as the node handler does, and no web `Request`
 * or web stream is built for it. Undefined on every other runtime, for HTTP/2 requests, and when a
 * middleware already touched the body (it then flows into `c.req.raw`, which is read instead).
 */
export function unreadNodeRequest(env: unknown): IncomingMessage | undefined {
  if (typeof env !== 'object' || env === null) return undefined;
  const incoming = (env as { incoming?: unknown }).incoming as IncomingMessage | undefined;
  if (
    typeof incoming !== 'object' ||
    incoming === null ||
    incoming.httpVersionMajor !== 1 ||
    typeof incoming.on !== 'function' ||
    typeof incoming.headers !== 'object' ||
    incoming.readableDidRead ||
    incoming.readableEnded
  ) {
    return undefined;
  }
  return incoming;
}
