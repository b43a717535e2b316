import {
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Delivery, Transport } from '../contracts/transport.js';
import type { Verdict } from '../worker/verdict.js';
import {
  eventAttributes,
  extractContext,
  linkFrom,
  linkToOriginal,
  messagingSystem,
  recordFailure,
  SPAN_ATTRIBUTES as A,
} from './tracing.js';

interface DeliveryTrace {
  readonly tracer: Tracer;
  readonly span: Span;
  /** The process span's context: the parent of the handler and settle spans. */
  readonly context: Context;
  readonly destination: string | undefined;
  readonly system: string;
}

/** The process span of each delivery being handled, found from the delivery (no context manager needed). */
const traces = new WeakMap<Delivery, DeliveryTrace>();

const named = (operation: string, destination: string | undefined) =>
  destination === undefined ? operation : `${operation} ${destination}`;

/**
 * Wraps a consume handler: each delivery attempt runs in a `process` span (kind CONSUMER), the
 * child of the creation context its envelope carries (so a retry, a lock expiry or a relay's copy
 * continues the receipt's trace), linked to it, and to the original trace when it is a redriven
 * or replayed copy. The handler runs with that span active.
 *
 * With a tracer that does not record, nothing is allocated beyond the span the tracer returns.
 */
export function traceDeliveries(
  tracer: Tracer,
  transport: Pick<Transport, 'name' | 'destination'>,
  handler: (delivery: Delivery) => Promise<void>,
): (delivery: Delivery) => Promise<void> {
  const { destination } = transport;
  const name = named('process', destination);
  const system = messagingSystem(transport.name);
  const traced = async (delivery: Delivery, parent: Context, span: Span): Promise<void> => {
    if (!span.isRecording()) {
      try {
        // A valid context that is not recorded (sampled out) still parents the handler's spans.
        return await context.with(trace.setSpan(parent, span), handler, undefined, delivery);
      } finally {
        span.end();
      }
    }
    const { envelope } = delivery;
    span.setAttributes({
      [A.system]: system,
      [A.operationType]: 'process',
      [A.operationName]: 'process',
      ...eventAttributes(envelope),
      [A.attempt]: delivery.attempt,
    });
    if (destination !== undefined) span.setAttribute(A.destination, destination);
    const links = [linkFrom(envelope.headers), linkToOriginal(envelope)].filter(
      (l): l is Link => l !== undefined,
    );
    if (links.length > 0) span.addLinks(links);
    const active = trace.setSpan(parent, span);
    traces.set(delivery, { tracer, span, context: active, destination, system });
    try {
      await context.with(active, handler, undefined, delivery);
    } catch (err) {
      recordFailure(span, err);
      throw err;
    } finally {
      traces.delete(delivery);
      span.end();
    }
  };
  return (delivery) => {
    try {
      const parent = extractContext(delivery.envelope.headers);
      const span = tracer.startSpan(name, { kind: SpanKind.CONSUMER }, parent);
      if (span.isRecording() || span.spanContext() !== INVALID_SPAN_CONTEXT)
        return traced(delivery, parent, span);
      // Neither recorded nor part of a trace: nothing to end later, no wrapper around the handler.
      span.end();
      return handler(delivery);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/**
 * Runs the handler (inside the worker's middleware), `run(arg)`, in a `handle <type>` span under
 * the delivery's `process` span; what it throws is recorded on it and rethrown. Without a recorded
 * `process` span it returns `run(arg)`'s own promise.
 */
export function traceHandler<A, T>(
  delivery: Delivery,
  type: string,
  run: (arg: A) => Promise<T>,
  arg: A,
): Promise<T> {
  const t = traces.get(delivery);
  if (t === undefined) return run(arg);
  return handleTraced(t, type, run, arg);
}

async function handleTraced<A, T>(
  t: DeliveryTrace,
  type: string,
  run: (arg: A) => Promise<T>,
  arg: A,
): Promise<T> {
  const span = t.tracer.startSpan(`handle ${type}`, { kind: SpanKind.INTERNAL }, t.context);
  try {
    return await context.with(trace.setSpan(t.context, span), run, undefined, arg);
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** True while `delivery` runs in a recorded `process` span (its settlement then gets a span too). */
export function isTraced(delivery: Delivery): boolean {
  return traces.has(delivery);
}

/**
 * Applies the worker's verdict, `apply(job, verdict, deps)`, in a settle span (`ack <destination>`
 * or `retry <destination>`, kind CLIENT) under the delivery's `process` span, and notes the
 * outcome on that span: a dead-letter is an event `onceflow.dead_letter` (reason, code, attempt)
 * and an error status; a failed attempt's retry marks the attempt failed with its error. Without a
 * recorded `process` span it returns `apply`'s own promise.
 */
export function traceVerdict<J, D>(
  delivery: Delivery,
  verdict: Verdict,
  apply: (job: J, verdict: Verdict, deps: D) => Promise<void>,
  job: J,
  deps: D,
): Promise<void> {
  const t = traces.get(delivery);
  if (t === undefined) return apply(job, verdict, deps);
  return settleTraced(t, delivery, verdict, () => apply(job, verdict, deps));
}

/** `traceVerdict` with a recorded `process` span: `applyIt` applies the verdict. */
async function settleTraced(
  t: DeliveryTrace,
  delivery: Delivery,
  verdict: Verdict,
  applyIt: () => Promise<void>,
): Promise<void> {
  const { span } = t;
  const settle = verdict.action === 'retry' ? 'retry' : 'ack';
  if (verdict.action === 'ack') {
    span.setAttribute(A.outcome, verdict.why);
  } else {
    span.setAttribute(A.outcome, verdict.action);
    if (verdict.action === 'dead-letter' || verdict.failure) {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: verdict.error?.message ?? verdict.code,
      });
      span.setAttribute(A.errorType, verdict.code);
    }
    if (verdict.action === 'dead-letter') {
      span.addEvent('onceflow.dead_letter', {
        [A.reason]: verdict.reason,
        [A.errorType]: verdict.code,
        [A.attempt]: delivery.attempt,
      });
    }
  }
  const attributes: Record<string, string | number> = {
    [A.system]: t.system,
    [A.operationType]: 'settle',
    [A.operationName]: settle,
    [A.messageId]: delivery.envelope.id,
  };
  if (t.destination !== undefined) attributes[A.destination] = t.destination;
  if (verdict.action === 'retry') attributes[A.retryDelayMs] = verdict.delayMs;
  const settling = t.tracer.startSpan(
    named(settle, t.destination),
    { kind: SpanKind.CLIENT, attributes },
    t.context,
  );
  try {
    await context.with(trace.setSpan(t.context, settling), applyIt);
  } catch (err) {
    recordFailure(settling, err);
    throw err;
  } finally {
    settling.end();
  }
}
