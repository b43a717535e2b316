import { context, propagation, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * A recording OpenTelemetry set-up for one test: a tracer whose finished spans are kept in
 * memory, and, for its lifetime, the global context manager (AsyncLocalStorage) and W3C trace
 * context propagator that an SDK's `register()` installs. Those two are removed on dispose when
 * this set-up installed them (it leaves alone any that were there before).
 *
 * @example
 * await using tracing = recordSpans();
 * createWorker({ transport, records, handlers, tracer: tracing.tracer });
 * tracing.spans().filter((s) => s.name.startsWith('process'));
 */
export interface SpanRecorder extends AsyncDisposable {
  readonly tracer: Tracer;
  /** Every span ended so far, in the order they ended. */
  spans(): readonly ReadableSpan[];
}

export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const ownContext = context.setGlobalContextManager(
    new AsyncLocalStorageContextManager().enable(),
  );
  const ownPropagator = propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    tracer: provider.getTracer('@onceflow/conformance'),
    spans: () => exporter.getFinishedSpans(),
    async [Symbol.asyncDispose]() {
      await provider.shutdown();
      if (ownContext) context.disable();
      if (ownPropagator) propagation.disable();
    },
  };
}
