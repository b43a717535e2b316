import type { Source } from '../contracts/source.js';

/** The methods a source's endpoint answers: POST, plus the sender's handshake methods if any. */
export interface AllowedMethods {
  /** True for POST and for the source's `preset.handshakeMethods`. */
  has(method: string): boolean;
  /** The `Allow` header of a 405, e.g. `POST` or `POST, GET`. */
  readonly allow: string;
}

/**
 * Webhooks are POSTs. A sender whose handshake uses another method (a CRC challenge sent as GET)
 * declares it in its preset; everything else is answered 405 before the body is read.
 *
 * @example
 * allowedMethods(stripe({ secrets })).has('GET'); // false: answered 405, Allow: POST
 */
export function allowedMethods(source: Source): AllowedMethods {
  const methods = new Set(['POST', ...(source.preset.handshakeMethods ?? [])]);
  return { has: (method) => methods.has(method), allow: [...methods].join(', ') };
}
