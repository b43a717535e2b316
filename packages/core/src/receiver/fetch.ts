import { BodyConsumedError, declaredLength, readStreamBody } from './body.js';
import type { PendingRequest } from './handle.js';
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

/** Adapts a Fetch API `Request`; its body is read at most once, up to the limit. */
export function fromFetch(request: Request): PendingRequest {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return {
    method: request.method,
    headers,
    contentLength: declaredLength(headers['content-length']),
    url: () => new URL(request.url),
    readBody: (limit) =>
      request.bodyUsed
        ? Promise.reject(new BodyConsumedError())
        : readStreamBody(request.body, limit),
  };
}

export function toResponse(reply: Reply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}
