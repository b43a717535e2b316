import type { IncomingWebhook } from '../contracts/verifier.js';

/**
 * A request as the framework adapters (`fromNode`, `fromFetch`) hand it to the receive path: its
 * body not read yet. Once read, it becomes the verifier's `IncomingWebhook`.
 */
export interface UnreadRequest {
  readonly method: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The declared Content-Length, if any. */
  readonly contentLength: number | undefined;
  url(): URL;
  /**
   * Reads the whole body; rejects with `PayloadTooLargeError` past `limit` bytes without buffering
   * them, and with `BodyTimeoutError` when it has not all arrived within `timeoutMs`.
   */
  readBody(limit: number, timeoutMs: number): Promise<Uint8Array>;
}

/**
 * The receiver's `IncomingWebhook`: an `UnreadRequest` with its body read. `url` is built on
 * first read: only handshakes (Graph's `validationToken`) look at it.
 *
 * A class on purpose, where the project otherwise writes factories: its getter lives on the
 * prototype, shared by every request. An object literal with its own `get url()` per request gets
 * a hidden class of its own, which V8 allocates in the old generation together with the getter's
 * closure; everything that closure reaches (the node request, its body) then survives every
 * young-generation GC until a full one. Under load that alone doubled the receiver's CPU time per
 * request (see bench/README.md).
 */
export class IncomingWebhookImpl implements IncomingWebhook {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  readonly #request: UnreadRequest;
  #url: URL | undefined;

  constructor(request: UnreadRequest, body: Uint8Array) {
    this.method = request.method;
    this.headers = request.headers;
    this.body = body;
    this.#request = request;
  }

  get url(): URL {
    this.#url ??= this.#request.url();
    return this.#url;
  }
}
