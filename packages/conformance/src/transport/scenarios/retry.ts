import type { ErrorInfo } from '@onceflow/core';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import type { ScenarioGroup } from '../scenario.js';

const failure = (attempt: number): ErrorInfo => ({
  code: 'INTERNAL',
  name: 'Error',
  message: `attempt ${attempt} failed`,
});

/** Delayed retry: never early, attempts counted. */
export const retryScenarios: ScenarioGroup = (caps, t) => {
  const delayMs = Math.min(t.retryDelayMs, caps.maxDelayMs);
  return [
    {
      name: 'retry({ delayMs }) is never delivered early, and each redelivery adds one attempt',
      proves: ['maxDelayMs'],
      async run({ fixture }) {
        await using fx = await fixture();
        const event = testEnvelope();
        const spy = createHandlerSpy(
          async (d) => {
            if (d.attempt === 1) return d.retry({ delayMs, error: failure(1) });
            if (d.attempt === 2) return d.retry({ delayMs: 0, error: failure(2) });
            return d.ack();
          },
          { timeoutMs: delayMs + t.deliveryMs },
        );
        await fx.consume(spy.handler(), { concurrency: 2 });
        await fx.publish(event);
        await spy.waitFor(event.id, 'processed', { attempt: 3 });
        const received = spy.of('received', event.id);
        expect(received.map((e) => e.attempt)).toEqual([1, 2, 3]);
        const [retried] = spy.of('retried', event.id);
        const second = received[1];
        expect(
          retried && second && second.at - retried.at,
          'ms from retry to redelivery',
        ).toBeGreaterThanOrEqual(delayMs);
      },
    },
  ];
};
