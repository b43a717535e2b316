import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

/** The `/metrics` endpoint, for a Fetch API runtime and for node:http, like the receiver's. */
export interface MetricsHandler {
  /** Answers a Fetch API request (Hono, Bun, Deno). Never rejects. */
  fetch(request: Request): Promise<Response>;
  /** Answers a node:http request (also Express, Fastify's `reply.raw`). Never rejects. */
  node(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Serves a prom-client registry in the Prometheus text format (the registry's `contentType`):
 * `GET` and `HEAD` only (405 otherwise), whatever the path, so route it where you like. Each
 * request collects the registry anew; a collect callback that throws answers 500 with its message.
 * Pass `createMetrics()`'s result, or `{ registry }` for a registry of your own.
 *
 * @example
 * const metrics = createMetrics();
 * const serveMetrics = createMetricsHandler(metrics);
 * http.createServer((req, res) => {
 *   if (req.url === '/metrics') return void serveMetrics.node(req, res);
 *   receiver.nodeHandler()(req, res);
 * });
 */
export function createMetricsHandler(metrics: { readonly registry: Registry }): MetricsHandler {
  const { registry } = metrics;
  const answer = async (method: string): Promise<Answer> => {
    if (method !== 'GET' && method !== 'HEAD') {
      return { status: 405, headers: { allow: 'GET, HEAD' }, body: '' };
    }
    try {
      const body = await registry.metrics();
      return { status: 200, headers: { 'content-type': registry.contentType }, body };
    } catch (err) {
      const text = `metrics collection failed: ${err instanceof Error ? err.message : String(err)}\n`;
      return { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: text };
    }
  };
  return {
    async fetch(request) {
      const a = await answer(request.method);
      return new Response(request.method === 'HEAD' ? null : a.body, {
        status: a.status,
        headers: a.headers,
      });
    },
    async node(req, res) {
      const a = await answer(req.method ?? 'GET');
      if (res.headersSent || res.destroyed) return;
      res.writeHead(a.status, {
        ...a.headers,
        'content-length': String(Buffer.byteLength(a.body)),
      });
      res.end(req.method === 'HEAD' ? undefined : a.body);
    },
  };
}
