import { randomBytes } from 'node:crypto';
import type {
  ConsumeOptions,
  Delivery,
  Envelope,
  OutgoingMessage,
  Subscription,
  Transport,
} from '@onceflow/core';
import { type TransportConformanceOptions, resolveTimeouts } from '../options.js';
import { type Gate, createGate, within } from '../wait.js';

/**
 * One scenario's broker resources: a fresh queue, a started transport on it, and everything
 * opened since, closed in reverse order on dispose (`await using fx = await newFixture()`).
 * Gates made with `gate()` are opened first, so a failed assertion never leaves a handler hung.
 */
export interface TransportFixture extends AsyncDisposable {
  readonly queue: string;
  /** The lock length its transports were made with. */
  readonly lockMs: number;
  /** Not started: publish and consume work without `start()`. */
  readonly transport: Transport;
  /** Another transport instance on the same queue (a second consumer, a restart). */
  open(): Promise<Transport>;
  consume(
    handler: (delivery: Delivery) => Promise<void>,
    options: ConsumeOptions,
    on?: Transport,
  ): Promise<Subscription>;
  publish(...items: readonly (Envelope | OutgoingMessage)[]): Promise<void>;
  gate(): Gate;
}

/** The lock of scenarios that are not about locks: none of them sees it expire. */
export const LONG_LOCK_MS = 60_000;

const runId = randomBytes(3).toString('hex');
let sequence = 0;

/** A queue name unique to this run and scenario: `onceflow-conf-<run>-<n>`. */
export const freshQueueName = (): string => `onceflow-conf-${runId}-${++sequence}`;

/**
 * @example
 * await using fx = await createTransportFixture({ createTransport: async ({ queue, lockMs }) => createMyTransport({ queue, lockMs }) });
 * await fx.publish(testEnvelope());
 */
export async function createTransportFixture(
  options: TransportConformanceOptions,
  fixtureOptions: { readonly lockMs?: number } = {},
): Promise<TransportFixture> {
  const t = resolveTimeouts(options.timeouts);
  const lockMs = fixtureOptions.lockMs ?? LONG_LOCK_MS;
  const queue = freshQueueName();
  const transports: Transport[] = [];
  const subscriptions: Subscription[] = [];
  const gates: Gate[] = [];

  const open = async () => {
    const transport = await options.createTransport({ queue, lockMs });
    transports.push(transport);
    return transport;
  };
  const transport = await open();

  return {
    queue,
    lockMs,
    transport,
    open,
    async consume(handler, consumeOptions, on = transport) {
      const sub = await on.consume(handler, consumeOptions);
      subscriptions.push(sub);
      return sub;
    },
    publish(...items) {
      return transport.publish(items.map((i) => ('envelope' in i ? i : { envelope: i })));
    },
    gate() {
      const gate = createGate();
      gates.push(gate);
      return gate;
    },
    async [Symbol.asyncDispose]() {
      for (const gate of gates) gate.open();
      const drainMs = t.deliveryMs * 2;
      await within(
        Promise.all(subscriptions.map((s) => s.close())),
        drainMs,
        `subscriptions of ${queue} to close after the scenario`,
      );
      await within(
        Promise.all(transports.map((tr) => tr.close())),
        drainMs,
        `transports of ${queue} to close after the scenario`,
      );
      await options.cleanup?.({ queue });
    },
  };
}
