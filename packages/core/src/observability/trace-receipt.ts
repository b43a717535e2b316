import {
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { ClaimResult } from '../contracts/inbox.js';
import type { Envelope } from '../envelope.js';
import { extractContext, injectContext, recordFailure, SPAN_ATTRIBUTES as A } from './tracing.js';

/**
 * Runs one webhook receipt in a `receive <source>` span: kind SERVER, the child of the sender's
 * `traceparent`, or INTERNAL under an HTTP server span already active (HTTP auto-instrumentation).
 * `receive` gets the span, which parents the verify, claim and send spans; the reply's outcome
 * and status are set on it, and a 5xx marks it failed.
 */
export function traceReceipt<R extends { readonly status: number; readonly outcome: string }>(
  tracer: Tracer,
  source: string,
  headers: Readonly<Record<string, string>>,
  receive: (span: Span) => Promise<R>,
): Promise<R> {
  const active = context.active();
  const inServer = trace.getSpan(active) !== undefined;
  const parent = inServer ? active : extractContext(headers, active);
  const kind = inServer ? SpanKind.INTERNAL : SpanKind.SERVER;
  const span = tracer.startSpan(`receive ${source}`, { kind }, parent);
  if (span.isRecording() || span.spanContext() !== INVALID_SPAN_CONTEXT) {
    return receiveInSpan(span, parent, source, receive);
  }
  // The no-op tracer (no SDK registered): nothing to record or to make active, no async wrapper.
  let received: Promise<R>;
  try {
    received = receive(span);
  } catch (err) {
    span.end();
    return Promise.reject(err);
  }
  return received.then(
    (reply) => {
      span.end();
      return reply;
    },
    (err: unknown) => {
      span.end();
      throw err;
    },
  );
}

async function receiveInSpan<R extends { readonly status: number; readonly outcome: string }>(
  span: Span,
  parent: Context,
  source: string,
  receive: (span: Span) => Promise<R>,
): Promise<R> {
  try {
    if (!span.isRecording()) {
      return await context.with(trace.setSpan(parent, span), receive, undefined, span);
    }
    span.setAttribute(A.eventSource, source);
    const reply = await context.with(trace.setSpan(parent, span), receive, undefined, span);
    span.setAttributes({ [A.outcome]: reply.outcome, [A.httpStatus]: reply.status });
    if (reply.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: reply.outcome });
    return reply;
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Runs the (synchronous) verification in a `verify <source>` span under the receipt; a thrown
 * `SignatureError` or `BadRequestError` is recorded with its code and rethrown.
 */
export function traceVerify<T>(tracer: Tracer, receipt: Span, source: string, verify: () => T): T {
  if (!receipt.isRecording()) return verify();
  const span = startChild(tracer, receipt, `verify ${source}`);
  try {
    const verified = verify();
    if (Array.isArray(verified)) span.setAttribute(A.eventCount, verified.length);
    return verified;
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}

function startChild(tracer: Tracer, parent: Span, name: string): Span {
  return tracer.startSpan(
    name,
    { kind: SpanKind.INTERNAL },
    trace.setSpan(context.active(), parent),
  );
}

/**
 * Writes the receipt span's context into the headers every envelope of this request gets, so the
 * inbox's claim keeps its trace id on the event record. A receipt that is not recorded leaves
 * them as they are (an incoming `traceparent` kept by the receiver still travels).
 */
export function injectReceipt(receipt: Span, headers: Record<string, string>): void {
  if (receipt.isRecording()) injectContext(receipt, headers);
}

/**
 * `inbox.claim` in a `claim <source>` span under the active span; the claim's status is an
 * attribute. Without a recording span active, `claim()`'s own promise is returned (no wrapper).
 */
export function traceClaim<C extends ClaimResult>(
  tracer: Tracer,
  envelope: Envelope,
  claim: () => Promise<C>,
): Promise<C> {
  const parent = trace.getActiveSpan();
  if (parent === undefined || !parent.isRecording()) return claim();
  return claimInSpan(tracer, parent, envelope, claim);
}

async function claimInSpan<C extends ClaimResult>(
  tracer: Tracer,
  parent: Span,
  envelope: Envelope,
  claim: () => Promise<C>,
): Promise<C> {
  const span = startChild(tracer, parent, `claim ${envelope.source}`);
  span.setAttribute(A.eventId, envelope.id);
  try {
    const result = await claim();
    span.setAttribute(A.claimStatus, result.status);
    return result;
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}
