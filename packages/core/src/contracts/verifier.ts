/** A request as the receiver hands it to a verifier: the raw bytes, nothing parsed. */
export interface IncomingWebhook {
  readonly method: string;
  readonly url: URL;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The raw body, byte-exact. */
  readonly body: Uint8Array;
}

/** What a verifier vouches for after the signature (or clientState) passed. */
export interface VerifiedEvent {
  /** The sender's event id (idempotency key). */
  readonly eventId: string;
  readonly type: string;
  /** Ordering key, if the sender's payload has a natural one. */
  readonly key?: string | undefined;
  /** ISO-8601. */
  readonly occurredAt?: string | undefined;
  /** Payload bytes for this event when one request carries several (Graph); else the whole body. */
  readonly payload?: Uint8Array | undefined;
  /**
   * Envelope headers this event brings besides the request's kept ones (a CloudEvent's
   * attributes as `ce-*`, its `datacontenttype` as `content-type`); they win over the request's.
   * Lower-case names; never a credential.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** A handshake answer: sent as is, no inbox or broker work. */
export interface HandshakeResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Verifies one request. Throws `SignatureError` (→ 401) for a missing or bad signature, a stale
 * timestamp or a wrong clientState, and `BadRequestError` (→ 400) when a verified body lacks what
 * is needed (an event id). It parses nothing before the signature has passed, and compares in
 * constant time. Pure: no I/O.
 */
export interface Verifier {
  /** Answers a handshake request (Graph `validationToken`), or returns undefined for a delivery. */
  handshake?(request: IncomingWebhook, now: Date): HandshakeResponse | undefined;
  verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[];
}
