import type { IncomingWebhook } from '../../src/contracts/verifier.js';

/** A request as the receiver hands it over: lower-case headers, raw bytes. */
export function webhook(init: {
  body: string | Uint8Array;
  headers?: Record<string, string>;
  url?: string;
  method?: string;
}): IncomingWebhook {
  const body = typeof init.body === 'string' ? new TextEncoder().encode(init.body) : init.body;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(init.headers ?? {}))
    headers[name.toLowerCase()] = value;
  return {
    method: init.method ?? 'POST',
    url: new URL(init.url ?? 'https://hooks.example.test/webhooks/test'),
    headers,
    body,
  };
}

/** Unix seconds of a Date. */
export const unix = (d: Date): number => Math.floor(d.getTime() / 1000);

/** A body a JSON re-serialisation would change: odd spacing, key order, escapes, non-ASCII. */
export const awkwardJson = (fields: string): string =>
  `{\n  "note" : "Grüße 💸 \\u00e9",\t${fields} ,"amount":1.50 }\r\n`;
