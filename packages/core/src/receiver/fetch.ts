import { BodyConsumedError, declaredLength, readStreamBody } from './body.js';
import type { UnreadRequest } from './incoming.js';
import type { Reply } from './reply.js';

/** The last non-empty path segment of a URL or path (`/webhooks/stripe?x=1` → `stripe`). */
export function lastSegment(path: string): string {
  const q = path.indexOf('?');
  const p = q === -1 ? path : path.slice(0, q);
  const end = p.endsWith('/') ? p.length - 1 : p.length;
  return p.slice(p.lastIndexOf('/', end - 1) + 1, end);
}

/** The path and query of an absolute URL (`https://h/webhooks/stripe?x` → `/webhooks/stripe?x`). */
export function pathOf(url: string): string {
  const scheme = url.indexOf('://');
  if (scheme === -1) return url;
  const slash = url.indexOf('/', scheme + 3);
  return slash === -1 ? '/' : url.slice(slash);
}

/** A Fetch API request as the receive path takes it; a class for the reason `UnreadNodeRequest` is. */
class UnreadFetchRequest implements UnreadRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentLength: number | undefined;
  readonly #request: Request;

  constructor(request: Request) {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    this.method = request.method;
    this.headers = headers;
    this.contentLength = declaredLength(headers['content-length']);
    this.#request = request;
  }

  url(): URL {
    return new URL(this.#request.url);
  }

  readBody(limit: number, timeoutMs: number): Promise<Uint8Array> {
    const request = this.#request;
    if (request.bodyUsed) return Promise.reject(new BodyConsumedError());
    return readStreamBody(request.body, limit, timeoutMs);
  }
}

/** Adapts a Fetch API `Request`; its body is read at most once, up to the limit. */
export function fromFetch(request: Request): UnreadRequest {
  return new UnreadFetchRequest(request);
}

/** The reply as a web `Response`; `close` asks the server to end the connection after it. */
export function toResponse(reply: Reply, close = false): Response {
  const headers = close ? { ...reply.headers, connection: 'close' } : reply.headers;
  return new Response(reply.body, { status: reply.status, headers });
}
