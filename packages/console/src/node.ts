import type { IncomingMessage, ServerResponse } from 'node:http';

/** Request bodies past this are not read (the console's forms are small). */
const MAX_BODY_BYTES = 256 * 1024;

/** Express and Connect strip the mount path from `req.url` and keep it in `originalUrl`. */
type NodeRequest = IncomingMessage & { readonly originalUrl?: string };

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * A node:http handler around a Fetch handler: builds the `Request` (host from the `Host`
 * header, path from `originalUrl` when a framework mounted it), streams the `Response` back.
 */
export function toNodeHandler(handle: (request: Request) => Promise<Response>) {
  return (req: NodeRequest, res: ServerResponse): void => {
    void (async () => {
      const method = req.method ?? 'GET';
      const body = method === 'GET' || method === 'HEAD' ? undefined : await readBody(req);
      if (body === undefined && method !== 'GET' && method !== 'HEAD') {
        res.writeHead(413, { 'content-type': 'text/plain' }).end('Request body too large');
        return;
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) for (const v of value) headers.append(name, v);
        else if (value !== undefined) headers.set(name, value);
      }
      const url = `http://${req.headers.host ?? 'localhost'}${req.originalUrl ?? req.url ?? '/'}`;
      const response = await handle(new Request(url, { method, headers, body }));
      const out: Record<string, string | string[]> = {};
      response.headers.forEach((value, name) => {
        out[name] = name === 'set-cookie' ? response.headers.getSetCookie() : value;
      });
      res.writeHead(response.status, out);
      if (!response.body || method === 'HEAD') {
        res.end();
        return;
      }
      for await (const chunk of response.body) res.write(chunk);
      res.end();
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(
        res.headersSent
          ? undefined
          : `console error: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
  };
}
