import { encodeEnvelope } from '@onceflow/core/kit';
import { toOnceflowError } from '@onceflow/core';
import { expect } from 'vitest';
import { asciiBytes, sameBytes, testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep } from '../../wait.js';
import type { ScenarioGroup, TransportScenario } from '../scenario.js';

const MiB = 1024 * 1024;
/** Above this declared limit the suite does not build an oversized message to probe it. */
const PROBE_LIMIT = 16 * MiB;

/** Envelope bytes besides the payload, for a payload of ASCII letters (no escaping). */
function overhead(): number {
  return Buffer.byteLength(encodeEnvelope(testEnvelope({ payload: new Uint8Array(0) })), 'utf8');
}

/** A payload of `n` bytes, sized so that its encoded envelope takes `target` bytes (±0). */
const payloadFor = (target: number) => asciiBytes(target - overhead(), target);

/** The largest message the transport declares, and the refusal of a larger one. */
export const sizeScenarios: ScenarioGroup = (caps) => {
  const fits = Math.min(MiB + overhead(), caps.maxMessageBytes);
  const big: TransportScenario = {
    name: 'round-trips a 1 MiB payload (a message of maxMessageBytes, if smaller) byte for byte',
    proves: ['maxMessageBytes'],
    async run({ fixture, t }) {
      await using fx = await fixture();
      const event = testEnvelope({ payload: payloadFor(fits) });
      expect(Buffer.byteLength(encodeEnvelope(event), 'utf8')).toBe(fits);
      const spy = createHandlerSpy(undefined, { timeoutMs: t.deliveryMs * 2 });
      await fx.consume(spy.handler(), { concurrency: 1 });
      await fx.publish(event);
      const got = await spy.waitFor(event.id, 'processed');
      expect(got.delivery.envelope.payloadHash).toBe(event.payloadHash);
      expect(sameBytes(got.delivery.envelope.payload, event.payload)).toBe(true);
    },
  };
  if (caps.maxMessageBytes > PROBE_LIMIT) return [big];
  const refused: TransportScenario = {
    name: 'refuses a message over maxMessageBytes with PayloadTooLargeError and stores nothing',
    proves: ['maxMessageBytes'],
    async run({ fixture, t }) {
      await using fx = await fixture();
      const tooBig = testEnvelope({ payload: payloadFor(caps.maxMessageBytes + 1) });
      const small = testEnvelope();
      const error = await fx.publish(small, tooBig).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error, 'publish of an oversized message must reject').toBeDefined();
      expect(toOnceflowError(error).code).toBe('PAYLOAD_TOO_LARGE');
      const after = testEnvelope();
      await fx.publish(after);
      const spy = createHandlerSpy(undefined, { timeoutMs: t.deliveryMs });
      await fx.consume(spy.handler(), { concurrency: 1 });
      await spy.waitFor(after.id, 'processed');
      await sleep(t.quietMs);
      expect(spy.count('received', tooBig.id)).toBe(0);
    },
  };
  return [big, refused];
};
