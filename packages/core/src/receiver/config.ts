import type { Tracer } from '@opentelemetry/api';
import { z } from 'zod';
import type { ClaimCheckMode } from '../claim-check/mode.js';
import type { Inbox } from '../contracts/inbox.js';
import type { Source } from '../contracts/source.js';
import type { Transport } from '../contracts/transport.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { type Logger, silentLogger } from '../observability/logger.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import { resolveTracer } from '../observability/tracing.js';
import { isSignatureHeader, TENANT_HEADER } from './headers.js';
import { DEFAULT_INBOX_RETENTION_MS } from './retention.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const hasMethods =
  (...names: string[]) =>
  (v: unknown): boolean =>
    isObject(v) && names.every((n) => typeof v[n] === 'function');

const sourceSchema = z.custom<Source>(
  (v) => isObject(v) && isObject(v.preset) && hasMethods('verify')(v.verifier),
  'a Source ({ preset, verifier }), e.g. stripe({ secrets })',
);

const schema = z.object({
  sources: z
    .record(z.string().regex(/^[\w.-]+$/, 'source names are URL path segments'), sourceSchema)
    .refine((s) => Object.keys(s).length > 0, 'at least one source'),
  pathPrefix: z
    .string()
    .regex(/^(\/[\w.-]+)*$/, 'a path prefix such as /webhooks (no trailing slash)')
    .optional(),
  inbox: z.custom<Inbox>(
    hasMethods('claim', 'markEnqueued', 'release', 'recordConflict'),
    'an Inbox',
  ),
  transport: z.custom<ReceiverTransport>(hasMethods('publish'), 'a Transport'),
  claimCheck: z.union([z.enum(['always', 'oversize']), z.literal(false)]).default(false),
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(256 * 1024),
  headersTimeoutMs: z.number().int().positive().default(10_000),
  bodyTimeoutMs: z.number().int().positive().default(10_000),
  maxConcurrentBodies: z.number().int().positive().default(256),
  leaseMs: z.number().int().positive().default(10_000),
  retryAfterSec: z.number().int().nonnegative().default(5),
  inboxRetentionMs: z.number().positive().default(DEFAULT_INBOX_RETENTION_MS),
  keepHeaders: z
    .array(z.string().transform((h) => h.toLowerCase()))
    .refine((hs) => !hs.some(isSignatureHeader), 'signature headers are never kept')
    .refine((hs) => !hs.includes(TENANT_HEADER), `${TENANT_HEADER} is set by the receiver only`)
    .default([]),
  logger: z.custom<Logger>(hasMethods('info', 'warn', 'error')).default(silentLogger),
  metrics: z.custom<OnceflowMetrics>((v) => isObject(v) && isObject(v.webhooksReceived)).optional(),
  now: z.custom<() => Date>((v) => typeof v === 'function').default(() => () => new Date()),
  tracer: z.custom<Tracer>(hasMethods('startSpan')).optional().transform(resolveTracer),
});

/** What the receiver publishes through. */
export type ReceiverTransport = Pick<Transport, 'publish'> &
  Partial<Pick<Transport, 'capabilities' | 'name' | 'destination'>>;

/** Everything `createReceiver` takes. Only `sources`, `inbox` and `transport` are required. */
export interface ReceiverConfig {
  /** Source name (the last path segment, `/webhooks/<name>`) → configured sender. */
  sources: Record<string, Source>;
  /**
   * Serve every source under one prefix with an optional tenant segment:
   * `<pathPrefix>/<source>` or `<pathPrefix>/<source>/<tenant>` (`/webhooks/stripe/acme`); other
   * paths are answered 404. The tenant goes to per-tenant sources (`tenantSecrets`) and onto the
   * envelope as header `onceflow-tenant`. Unset (the default): the source is the last path
   * segment, as before, and no tenant is read from the path.
   */
  pathPrefix?: string | undefined;
  /** The dedupe authority; one `claim` per event, then `markEnqueued` or `release`. */
  inbox: Inbox;
  /** Only `publish` is used (and `capabilities.maxMessageBytes`, with `claimCheck: 'oversize'`). */
  transport: ReceiverTransport;
  /**
   * Claim-check mode: what goes on the broker is the event's reference (source, id, type, key,
   * payload hash, trace context), not its payload; a worker with `claimCheck: true` loads the
   * event from the store. `always` for every event, `oversize` only for events whose wire
   * encoding is over the transport's `capabilities.maxMessageBytes` (a 5 MiB webhook over SQS:
   * raise `maxBodyBytes` too), `false` (the default) never. Needs an inbox that keeps claimed
   * envelopes (the embedded or PostgreSQL store): any other is refused at `createReceiver` with a
   * `UsageError`.
   */
  claimCheck?: ClaimCheckMode | undefined;
  /** Larger bodies are refused with 413 before (Content-Length) or while reading. Default 256 KiB. */
  maxBodyBytes?: number | undefined;
  /**
   * Time a client has to send its request line and headers, in ms. Default 10 s. Enforced by the
   * node:http server: create it with `receiver.serverOptions`, which answers 408 and closes the
   * socket once it runs out (checked at least once a second).
   */
  headersTimeoutMs?: number | undefined;
  /**
   * Time a client has to send the whole body once its headers are in, in ms. Default 10 s (a
   * sender gives up on its request after about as long: GitHub after 10 s). Past it the receiver
   * answers 408, closes the connection and has stored nothing. On every adapter (node and fetch).
   */
  bodyTimeoutMs?: number | undefined;
  /**
   * Most request bodies read at once, per receiver. Default 256 (with `maxBodyBytes`, at most
   * 64 MiB of bodies held). Beyond it a request is answered 503 `overloaded` with `Retry-After`
   * before its body is read, so slow clients cannot make it buffer without bound.
   */
  maxConcurrentBodies?: number | undefined;
  /**
   * Lease on a fresh claim, in ms. Default 10 s. While it lasts, a sender's retry of the same event
   * is answered 503 `in-flight`; after it, the retry takes the claim over and publishes (the relay
   * does so too, once the claim is `olderThanMs` old, 60 s by default). A receive takes
   * milliseconds, so the lease only has to outlive one slow receive, its publish included: the
   * default keeps a crashed request from answering retries 503 for long. A publish that outlasts
   * it is harmless: the retry publishes a second copy with the same dedupe key, which broker dedupe
   * and the worker's processed-guard absorb, and the slow request's `markEnqueued` is a no-op.
   */
  leaseMs?: number | undefined;
  /** `Retry-After` seconds sent with 503. Default 5. */
  retryAfterSec?: number | undefined;
  /**
   * How long the inbox keeps ids (what your retention janitor purges after). The receiver refuses
   * to start when it is shorter than a source's retry horizon. Default 4 days.
   */
  inboxRetentionMs?: number | undefined;
  /** Extra request headers (besides content type, trace context, delivery/attempt headers) to keep on the envelope. Never signatures. */
  keepHeaders?: readonly string[] | undefined;
  logger?: Logger | undefined;
  metrics?: OnceflowMetrics | undefined;
  /** Clock for signature tolerance and `receivedAt`. Default `() => new Date()`. */
  now?: (() => Date) | undefined;
  /**
   * OpenTelemetry tracer for the receipt span and its verify, claim and send children. Default:
   * the global API's (`trace.getTracer('@onceflow/core')`), a no-op until an SDK is registered.
   */
  tracer?: Tracer | undefined;
}

export type ResolvedReceiverConfig = z.output<typeof schema>;

/** Defaults and validation for the receiver, in one spot. Throws `ConfigError`. */
export function resolveReceiverConfig(config: ReceiverConfig): ResolvedReceiverConfig {
  return parseConfig('receiver config', schema, config);
}
