import { createRequire } from 'node:module';
import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Envelope } from '../envelope.js';

/** The instrumentation scope of every onceflow span. */
export const TRACER_NAME = '@onceflow/core';

/**
 * Envelope header of a redriven or replayed copy: the `traceparent` of the original, which the
 * copy's spans link to (the copy itself starts a new trace).
 */
export const TRACE_LINK_HEADER = 'x-onceflow-trace-link';

/** Attribute names: the OpenTelemetry messaging conventions, and onceflow's own. */
export const SPAN_ATTRIBUTES = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  batchCount: 'messaging.batch.message_count',
  bodySize: 'messaging.message.body.size',
  errorType: 'error.type',
  eventId: 'onceflow.event.id',
  eventSource: 'onceflow.event.source',
  eventType: 'onceflow.event.type',
  eventCount: 'onceflow.event.count',
  attempt: 'onceflow.delivery.attempt',
  outcome: 'onceflow.outcome',
  reason: 'onceflow.dead_letter.reason',
  retryDelayMs: 'onceflow.retry.delay_ms',
  claimStatus: 'onceflow.claim.status',
  httpStatus: 'http.response.status_code',
  actor: 'onceflow.actor',
} as const;

let version: string | undefined | null = null;
/** This package's version, read once from its package.json (two levels above `src/` and `dist/` files alike). */
function coreVersion(): string | undefined {
  if (version !== null) return version;
  try {
    const pkg = createRequire(import.meta.url)('../../package.json') as { version?: unknown };
    version = typeof pkg.version === 'string' ? pkg.version : undefined;
  } catch {
    version = undefined;
  }
  return version;
}

/**
 * The tracer a component uses: the one given, else the global API's (a no-op until an SDK
 * registers a tracer provider; a provider registered later is picked up, the API's tracer is a proxy).
 */
export function resolveTracer(tracer: Tracer | undefined): Tracer {
  return tracer ?? trace.getTracer(TRACER_NAME, coreVersion());
}

/** `messaging.system` for a transport name (the conventions' well-known values where one exists). */
export function messagingSystem(transportName: string): string {
  return transportName === 'sqs' ? 'aws_sqs' : transportName;
}

const getter: TextMapGetter<Readonly<Record<string, string>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};
const setter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key.toLowerCase()] = value;
  },
};

/** The trace context carried by lower-case headers (the global propagator's fields), on top of `base`. */
export function extractContext(
  headers: Readonly<Record<string, string>>,
  base: Context = ROOT_CONTEXT,
): Context {
  return propagation.extract(base, headers, getter);
}

/** Writes the trace context of `span` into lower-case headers (the global propagator's fields). */
export function injectContext(span: Span, headers: Record<string, string>): void {
  propagation.inject(trace.setSpan(context.active(), span), headers, setter);
}

/** A link to the span context the headers carry, if they carry a valid one. */
export function linkFrom(headers: Readonly<Record<string, string>>): Link | undefined {
  const spanContext = trace.getSpanContext(extractContext(headers));
  return spanContext && trace.isSpanContextValid(spanContext)
    ? { context: spanContext }
    : undefined;
}

/** The link to the original a redriven or replayed copy names in `TRACE_LINK_HEADER`. */
export function linkToOriginal(envelope: Envelope): Link | undefined {
  const original = envelope.headers[TRACE_LINK_HEADER];
  return original === undefined ? undefined : linkFrom({ traceparent: original });
}

/** The event's own attributes: id (as the message id), source, type. */
export function eventAttributes(envelope: Envelope): Attributes {
  return {
    [SPAN_ATTRIBUTES.messageId]: envelope.id,
    [SPAN_ATTRIBUTES.eventSource]: envelope.source,
    [SPAN_ATTRIBUTES.eventType]: envelope.type,
  };
}

/** Marks the span failed with what was thrown (recorded as an exception event). */
export function recordFailure(span: Span, error: unknown, errorType?: string): void {
  if (!span.isRecording()) return;
  const err = error instanceof Error ? error : new Error(String(error));
  span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  span.setAttribute(SPAN_ATTRIBUTES.errorType, errorType ?? errorCodeOf(error) ?? err.name);
}

const errorCodeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/**
 * Runs `fn` in a span that is active while it runs (children nest under it when a context
 * manager is registered) and ends when it settles; a throw marks the span failed and is rethrown.
 */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  options: Parameters<Tracer['startSpan']>[1],
  fn: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  const span = tracer.startSpan(name, options, parent);
  try {
    return await context.with(trace.setSpan(parent, span), fn, undefined, span);
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}

export type { SpanContext };
