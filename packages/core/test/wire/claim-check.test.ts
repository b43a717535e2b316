import { describe, expect, it } from 'vitest';
import { claimCheckPublisher } from '../../src/claim-check/publish.js';
import type { OutgoingMessage } from '../../src/contracts/transport.js';
import { createEnvelope } from '../../src/envelope.js';
import { UsageError, WireFormatError } from '../../src/errors.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { createReceiver } from '../../src/receiver/index.js';
import { createRelay } from '../../src/relay.js';
import { stripe } from '../../src/verify/index.js';
import { defineHandler } from '../../src/worker/handler.js';
import { createWorker } from '../../src/worker/worker.js';
import {
  CLAIM_CHECK_HEADER,
  claimCheckReference,
  decodeEnvelope,
  encodeEnvelope,
  fromWire,
  isClaimCheckReference,
} from '../../src/wire.js';

const envelope = createEnvelope({
  source: 'stripe',
  id: 'evt_1',
  type: 'charge.succeeded',
  key: 'cus_9',
  occurredAt: '2026-01-01T00:00:00.000Z',
  payload: { id: 'evt_1', card: 'pan-4242424242424242' },
  headers: {
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    'x-kept': 'personal data',
  },
});

describe('the claim-check reference on the wire', () => {
  it('carries source, id, type, key, hash and trace context, and no payload or other header', () => {
    const body = encodeEnvelope(claimCheckReference(envelope));
    expect(JSON.parse(body)).toEqual({
      v: 1,
      ref: 1,
      id: 'evt_1',
      source: 'stripe',
      type: 'charge.succeeded',
      headers: { traceparent: envelope.headers.traceparent },
      receivedAt: envelope.receivedAt,
      payloadHash: envelope.payloadHash,
      key: 'cus_9',
      occurredAt: '2026-01-01T00:00:00.000Z',
    });
    expect(body).not.toContain('pan-4242');
    expect(body).not.toContain('personal data');
  });

  it('decodes back to a reference, recognised by its marker', () => {
    const decoded = decodeEnvelope(encodeEnvelope(claimCheckReference(envelope)));
    expect(isClaimCheckReference(decoded)).toBe(true);
    expect(decoded.headers[CLAIM_CHECK_HEADER]).toBe('1');
    expect(decoded.payload.byteLength).toBe(0);
    expect(decoded.payloadHash).toBe(envelope.payloadHash);
    expect(isClaimCheckReference(decodeEnvelope(encodeEnvelope(envelope)))).toBe(false);
  });

  it('is refused by a plain v1 decoder, and a malformed reference by decodeEnvelope', () => {
    const wire: unknown = JSON.parse(encodeEnvelope(claimCheckReference(envelope)));
    expect(() => fromWire(wire)).toThrow(WireFormatError);
    expect(() => decodeEnvelope('{"v":1,"ref":2,"id":"x","source":"s"}')).toThrow(
      /claim-check reference/,
    );
  });
});

describe('claimCheckPublisher', () => {
  const capture = (maxMessageBytes: number) => {
    const sent: OutgoingMessage[] = [];
    const transport = createMemoryTransport({ maxMessageBytes });
    const publisher = {
      capabilities: transport.capabilities,
      publish: async (messages: readonly OutgoingMessage[]) => {
        sent.push(...messages);
        await transport.publish(messages);
      },
    };
    return { sent, publisher };
  };

  it("'oversize' references only the envelopes over maxMessageBytes", async () => {
    const { sent, publisher } = capture(1024);
    const big = createEnvelope({
      source: 's',
      id: 'big',
      type: 't',
      payload: { x: 'y'.repeat(2000) },
    });
    await claimCheckPublisher(publisher, 'oversize').publish([{ envelope }, { envelope: big }]);
    expect(sent.map((m) => isClaimCheckReference(m.envelope))).toEqual([false, true]);
  });

  it("'always' references every envelope", async () => {
    const { sent, publisher } = capture(256 * 1024);
    await claimCheckPublisher(publisher, 'always').publish([{ envelope }]);
    expect(isClaimCheckReference(sent[0]!.envelope)).toBe(true);
  });

  it("'oversize' needs capabilities.maxMessageBytes", () => {
    expect(() => claimCheckPublisher({ publish: async () => {} }, 'oversize')).toThrow(UsageError);
  });
});

describe('the relay with claimCheck', () => {
  it('re-publishes a stale claim as its reference', async () => {
    const store = createMemoryStore();
    const { sent, publisher } = (() => {
      const out: OutgoingMessage[] = [];
      return {
        sent: out,
        publisher: { publish: async (m: readonly OutgoingMessage[]) => void out.push(...m) },
      };
    })();
    await store.claim(envelope, { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const relay = createRelay({
      inbox: store,
      transport: publisher,
      olderThanMs: 0,
      claimCheck: 'always',
    });
    expect(await relay.runOnce()).toBe(1);
    expect(sent).toHaveLength(1);
    expect(isClaimCheckReference(sent[0]!.envelope)).toBe(true);
    await relay.close();
  });
});

describe('claim-check over a store that does not keep envelopes', () => {
  it('is refused by createReceiver and createWorker with a UsageError', () => {
    const store = createMemoryStore();
    const transport = createMemoryTransport();
    expect(() =>
      createReceiver({
        sources: { stripe: stripe({ secrets: ['whsec_test'] }) },
        inbox: store,
        transport,
        claimCheck: 'always',
      }),
    ).toThrow(/claimCheck needs a store that keeps claimed envelopes/);
    expect(() =>
      createWorker({
        transport,
        records: store,
        claimCheck: true,
        handlers: [defineHandler({ type: 't', handle: async () => {} })],
      }),
    ).toThrow(UsageError);
  });
});
