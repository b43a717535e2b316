import type { IncomingMessage, ServerResponse } from 'node:http';
import { createConsoleHandler } from './app.js';
import { toNodeHandler } from './node.js';
import type { ConsoleOptions } from './options.js';

export interface OnceflowConsole {
  /** For Hono, Bun, Deno or anything Fetch-shaped: `app.all('/console/*', (c) => console.fetch(c.req.raw))`. */
  fetch(request: Request): Promise<Response>;
  /** For node:http, Express (`app.use('/console', console.node)`) and Fastify (via a raw route). */
  node(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * The operator console over an event record: overview, events search and each event's timeline,
 * dead letters with redrive and purge (dry run first, then progress). Read-only unless `write`;
 * every page needs `auth`; every action carries a CSRF token and is written to the record's
 * history as `console:<operator>`. Pages are server-rendered with every value escaped, no script
 * and a strict Content-Security-Policy. Creating it does no I/O.
 *
 * @example
 * const ops = createConsole({ records: embedded.records, transport, auth: { token: process.env.CONSOLE_TOKEN! }, basePath: '/console', write: true });
 * createServer((req, res) => (req.url?.startsWith('/console') ? ops.node(req, res) : app(req, res))).listen(3000);
 */
export function createConsole(options: ConsoleOptions): OnceflowConsole {
  const fetch = createConsoleHandler(options);
  return { fetch, node: toNodeHandler(fetch) };
}
