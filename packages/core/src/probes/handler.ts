import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProbeReport } from './checks.js';

/**
 * One probe as ready handlers: 200 with the report when every check passed, else 503. Never
 * rejects; any number of calls may run at once (each runs the checks afresh).
 */
export interface ProbeHandler {
  /** Runs the checks and returns the report. */
  run(): Promise<ProbeReport>;
  /** Answers a Fetch API request (Hono, Bun, Deno); any method, no body on HEAD. */
  fetch(request?: Request): Promise<Response>;
  /** Answers a node:http request (also Express and Fastify's `reply.raw`). */
  node(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** A `(req, res)` listener for `http.createServer` or a router. */
  nodeHandler(): (req: IncomingMessage, res: ServerResponse) => void;
}

const HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const;

export function probeHandler(run: () => Promise<ProbeReport>): ProbeHandler {
  const answer = async (head: boolean) => {
    const report = await run();
    return {
      status: report.status === 'pass' ? 200 : 503,
      body: head ? '' : JSON.stringify(report),
    };
  };
  const node = async (req: IncomingMessage, res: ServerResponse) => {
    const { status, body } = await answer(req.method === 'HEAD');
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, { ...HEADERS, 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  };
  return {
    run,
    async fetch(request) {
      const { status, body } = await answer(request?.method === 'HEAD');
      return new Response(body === '' ? null : body, { status, headers: { ...HEADERS } });
    },
    node,
    nodeHandler: () => (req, res) => void node(req, res),
  };
}
