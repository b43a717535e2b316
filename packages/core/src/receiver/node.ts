import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { declaredLength, readNodeBody } from './body.js';
import type { UnreadRequest } from './incoming.js';
import type { Reply } from './reply.js';

/** node's headers are already lower-case; only repeated `set-cookie`-style arrays need joining. */
function flatHeaders(raw: IncomingHttpHeaders): Record<string, string> {
  for (const name in raw) {
    if (typeof raw[name] !== 'string') {
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(raw)) {
        if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      }
      return flat;
    }
  }
  return raw as Record<string, string>;
}

function requestUrl(req: IncomingMessage): URL {
  const path = req.url ?? '/';
  try {
    return new URL(path, `http://${req.headers.host ?? 'localhost'}`);
  } catch {
    return new URL(path, 'http://localhost');
  }
}

/**
 * A node:http request as the receive path takes it. A class so that `url` and `readBody` are
 * shared prototype methods rather than two closures made for every request (the hot path).
 */
class UnreadNodeRequest implements UnreadRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentLength: number | undefined;
  readonly #req: IncomingMessage;

  constructor(req: IncomingMessage) {
    this.method = req.method ?? 'POST';
    this.headers = flatHeaders(req.headers);
    this.contentLength = declaredLength(this.headers['content-length']);
    this.#req = req;
  }

  url(): URL {
    return requestUrl(this.#req);
  }

  readBody(limit: number, timeoutMs: number): Promise<Uint8Array> {
    return readNodeBody(this.#req, limit, timeoutMs);
  }
}

/** Adapts a node:http request (also Express's and Fastify's `request.raw`). */
export function fromNode(req: IncomingMessage): UnreadRequest {
  return new UnreadNodeRequest(req);
}

/**
 * Writes the reply. When the request body was not read to its end (404, 413), the connection is
 * closed after the answer instead of reading and discarding what the client still sends.
 */
export function writeNode(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = {};
  for (const name in reply.headers) headers[name] = reply.headers[name]!;
  headers['content-length'] = String(Buffer.byteLength(reply.body));
  if (!req.complete) headers.connection = 'close';
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}
