import { createWorker, defineHandler, type Envelope } from '@onceflow/core';
import { claimCheckReference, encodeEnvelope } from '@onceflow/core/kit';
import { describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { event, tempDbPath, waitFor } from './helpers.js';

/** Claims and enqueues `envelope` the way the receiver does, then publishes its reference. */
async function receiveAsReference(
  embedded: ReturnType<typeof createEmbedded>,
  transport: ReturnType<ReturnType<typeof createEmbedded>['transport']>,
  envelope: Envelope,
  reference: Envelope = claimCheckReference(envelope),
) {
  const claim = await embedded.inbox.claim(envelope, { leaseMs: 10_000 });
  if (claim.status !== 'new') throw new Error(`claim: ${claim.status}`);
  await transport.publish([{ envelope: reference }]);
  await embedded.inbox.markEnqueued(envelope.source, envelope.id, claim.token);
}

function worker(
  embedded: ReturnType<typeof createEmbedded>,
  transport: ReturnType<ReturnType<typeof createEmbedded>['transport']>,
  claimCheck: boolean,
) {
  const got: Envelope[] = [];
  const w = createWorker({
    transport,
    records: embedded.records,
    claimCheck,
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
    handlers: [
      defineHandler({
        type: 'test.event',
        async handle(_event, ctx) {
          got.push(ctx.envelope);
        },
      }),
    ],
  });
  return { worker: w, got };
}

describe('claim-check over the embedded store and transport', () => {
  it('keeps the envelope once enqueued, and the worker handles the reference with it', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), pollIntervalMs: 20 });
    const transport = embedded.transport('cc-ok');
    const envelope = event('evt_cc_1', { payload: { id: 'evt_cc_1', secret: 'pan-4242' } });
    await receiveAsReference(embedded, transport, envelope);
    const stored = (await embedded.records.get('test', 'evt_cc_1'))?.envelope;
    expect(stored && encodeEnvelope(stored)).toBe(encodeEnvelope(envelope));
    const { worker: w, got } = worker(embedded, transport, true);
    await w.start();
    try {
      await waitFor(
        async () => (await embedded.records.get('test', 'evt_cc_1'))?.state === 'completed',
      );
      expect(got).toHaveLength(1);
      expect(Buffer.from(got[0]!.payload).toString()).toContain('pan-4242');
      expect(got[0]!.headers['x-onceflow-claim-check']).toBeUndefined();
    } finally {
      await w.close();
    }
  });

  it('dead-letters at once a reference whose stored payload has another hash', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), pollIntervalMs: 20 });
    const transport = embedded.transport('cc-mismatch');
    const envelope = event('evt_cc_2');
    const forged = claimCheckReference({ ...envelope, payloadHash: 'f'.repeat(64) });
    await receiveAsReference(embedded, transport, envelope, forged);
    const { worker: w, got } = worker(embedded, transport, true);
    await w.start();
    try {
      const record = await waitFor(async () => {
        const r = await embedded.records.get('test', 'evt_cc_2');
        return r?.state === 'dead-lettered' && r;
      });
      expect(record.reason).toMatch(
        /^claim-check: the stored payload of test\/evt_cc_2 does not match/,
      );
      expect(record.attempts).toBe(1);
      expect(got).toHaveLength(0);
    } finally {
      await w.close();
    }
  });

  it('a worker without claimCheck dead-letters a reference, keeping the stored envelope', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), pollIntervalMs: 20 });
    const transport = embedded.transport('cc-off');
    const envelope = event('evt_cc_3');
    await receiveAsReference(embedded, transport, envelope);
    const { worker: w, got } = worker(embedded, transport, false);
    await w.start();
    try {
      const record = await waitFor(async () => {
        const r = await embedded.records.get('test', 'evt_cc_3');
        return r?.state === 'dead-lettered' && r;
      });
      expect(record.reason).toContain('without the claimCheck option');
      expect(record.envelope && encodeEnvelope(record.envelope)).toBe(encodeEnvelope(envelope));
      expect(got).toHaveLength(0);
    } finally {
      await w.close();
    }
  });
});
