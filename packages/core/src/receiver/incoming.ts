import type { IncomingWebhook } from '../contracts/verifier.js';

/** A request as the framework adapters hand it over: nothing read yet. */
export interface PendingRequest {
  readonly method: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The declared Content-Length, if any. */
  readonly contentLength: number | undefined;
  url(): URL;
  /** Reads the whole body; rejects with `PayloadTooLargeError` past `limit` bytes without buffering them. */
  readBody(limit: number): Promise<Uint8Array>;
}

/**
 * The request as a verifier sees it, once its body is read. `url` is built on first read: only
 * handshakes (Graph's `validationToken`) look at it.
 *
 * A class on purpose, where the project otherwise writes factories: its getter lives on the
 * prototype, shared by every request. An object literal with its own `get url()` per request gets
 * a hidden class of its own, which V8 allocates in the old generation together with the getter's
 * closure; everything that closure reaches (the node request, its body) then survives every
 * young-generation GC until a full one. Under load that alone doubled the receiver's CPU time per
 * request (see bench/README.md).
 */
export class IncomingRequest implements IncomingWebhook {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  readonly #pending: PendingRequest;
  #url: URL | undefined;

  constructor(pending: PendingRequest, body: Uint8Array) {
    this.method = pending.method;
    this.headers = pending.headers;
    this.body = body;
    this.#pending = pending;
  }

  get url(): URL {
    this.#url ??= this.#pending.url();
    return this.#url;
  }
}
