import {
  type Context,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { OutgoingMessage, Transport } from '../contracts/transport.js';
import {
  eventAttributes,
  injectContext,
  linkFrom,
  messagingSystem,
  recordFailure,
  resolveTracer,
  SPAN_ATTRIBUTES as A,
  TRACE_LINK_HEADER,
} from './tracing.js';

/** What the traced publishes need of a transport: `publish`, and its name and destination for the spans. */
export type Publisher = Pick<Transport, 'publish'> &
  Partial<Pick<Transport, 'name' | 'destination'>>;

const spanName = (operation: string, transport: Publisher) =>
  transport.destination === undefined ? operation : `${operation} ${transport.destination}`;

function messagingAttributes(transport: Publisher, operation: string) {
  const attributes: Record<string, string> = {
    [A.operationType]: operation,
    [A.operationName]: operation,
  };
  if (transport.name !== undefined) attributes[A.system] = messagingSystem(transport.name);
  if (transport.destination !== undefined) attributes[A.destination] = transport.destination;
  return attributes;
}

/** The message with the span's context written into a copy of its envelope headers. */
function carrying(message: OutgoingMessage, span: Span): OutgoingMessage {
  const headers = { ...message.envelope.headers };
  injectContext(span, headers);
  return { ...message, envelope: { ...message.envelope, headers } };
}

/**
 * `transport.publish(messages)` in a `send` span, the messaging conventions' producer side,
 * parented on the active context (the receipt, the relay run, a redrive). One message: the
 * `send` span is its creation context (kind PRODUCER), injected into the envelope headers, so
 * every delivery attempt continues the trace. Several: one `create` span (PRODUCER) per message
 * is its creation context, and the `send` span (CLIENT) links to each. Messages whose creation
 * context was already written (`created`) are sent as they are, linked.
 *
 * With a tracer that does not record (the default until an SDK is registered) the messages go
 * out unchanged: an incoming `traceparent` the receiver kept still travels.
 *
 * @example
 * // Publishing from your own service: the event's deliveries continue this trace.
 * await publishTraced(trace.getTracer('orders'), transport, [{ envelope: createEnvelope(init) }]);
 */
export function publishTraced(
  tracer: Tracer,
  transport: Publisher,
  messages: readonly OutgoingMessage[],
  options: { readonly created?: boolean; readonly parent?: Context } = {},
): Promise<void> {
  const parent = options.parent ?? context.active();
  const single = messages.length === 1 && !options.created;
  const span = tracer.startSpan(
    spanName('send', transport),
    { kind: single ? SpanKind.PRODUCER : SpanKind.CLIENT },
    parent,
  );
  if (span.isRecording()) return sendInSpan(tracer, transport, messages, options, parent, span);
  // Not recorded (the default): the publish's own promise, no async wrapper around it.
  let published: Promise<void>;
  try {
    published = transport.publish(messages);
  } catch (err) {
    span.end();
    return Promise.reject(err);
  }
  return published.then(
    () => span.end(),
    (err: unknown) => {
      span.end();
      throw err;
    },
  );
}

/** `publishTraced` with a recording `send` span. */
async function sendInSpan(
  tracer: Tracer,
  transport: Publisher,
  messages: readonly OutgoingMessage[],
  options: { readonly created?: boolean },
  parent: Context,
  span: Span,
): Promise<void> {
  const single = messages.length === 1 && !options.created;
  span.setAttributes(messagingAttributes(transport, 'send'));
  let out = messages;
  // The conventions: a message's own attributes on a one-message span, a count on a batch's.
  if (messages.length === 1) span.setAttributes(eventAttributes(messages[0]!.envelope));
  else span.setAttribute(A.batchCount, messages.length);
  if (single) {
    out = [carrying(messages[0]!, span)];
  } else {
    if (!options.created) {
      out = messages.map((m) => {
        const create = tracer.startSpan(
          spanName('create', transport),
          {
            kind: SpanKind.PRODUCER,
            attributes: {
              ...messagingAttributes(transport, 'create'),
              ...eventAttributes(m.envelope),
            },
          },
          parent,
        );
        create.end();
        return carrying(m, create);
      });
    }
    span.addLinks(out.map((m) => linkFrom(m.envelope.headers)).filter((l): l is Link => !!l));
  }
  try {
    await context.with(trace.setSpan(parent, span), () => transport.publish(out));
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Publishes copies of stored envelopes (a redrive, a replay), each in a trace of its own: a root
 * span `<operation> <source>` (PRODUCER, the copy's creation context) linked to the original's
 * trace, then `send`. The copy's `traceparent` is the new trace's, and `x-onceflow-trace-link`
 * keeps the original's, so a worker links its spans to it even when the publisher records no
 * spans (then the copy has no `traceparent` and the worker's first span starts the new trace).
 *
 * @example
 * await publishInNewTraces(transport, [{ envelope: copy, dedupeKey }], { operation: 'replay' });
 */
export async function publishInNewTraces(
  transport: Publisher,
  messages: readonly OutgoingMessage[],
  options: {
    readonly operation: 'redrive' | 'replay';
    /** Who acts (`cli:alice`), as the `onceflow.actor` attribute. */
    readonly actor?: string | undefined;
    /** Default: the global API's tracer. */
    readonly tracer?: Tracer | undefined;
  },
): Promise<void> {
  const { operation } = options;
  const tracer = resolveTracer(options.tracer);
  const roots: Span[] = [];
  const copies = messages.map((m) => {
    const { traceparent, tracestate: _state, ...rest } = m.envelope.headers;
    const headers: Record<string, string> = { ...rest };
    const original = m.envelope.headers[TRACE_LINK_HEADER] ?? traceparent;
    if (original !== undefined) headers[TRACE_LINK_HEADER] = original;
    const link = original === undefined ? undefined : linkFrom({ traceparent: original });
    const root = tracer.startSpan(
      `${operation} ${m.envelope.source}`,
      { kind: SpanKind.PRODUCER, root: true, links: link ? [link] : [] },
      ROOT_CONTEXT,
    );
    roots.push(root);
    const copy = { ...m, envelope: { ...m.envelope, headers } };
    if (!root.isRecording()) return copy;
    root.setAttributes({
      ...messagingAttributes(transport, 'create'),
      ...eventAttributes(m.envelope),
    });
    if (options.actor !== undefined) root.setAttribute(A.actor, options.actor);
    injectContext(root, headers);
    return copy;
  });
  const parent = roots.length === 1 ? trace.setSpan(ROOT_CONTEXT, roots[0]!) : ROOT_CONTEXT;
  try {
    await publishTraced(tracer, transport, copies, { created: true, parent });
  } catch (err) {
    for (const root of roots) recordFailure(root, err);
    throw err;
  } finally {
    for (const root of roots) root.end();
  }
}
