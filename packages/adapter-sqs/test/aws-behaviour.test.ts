import { createHandlerSpy, testEnvelope, waitUntil } from '@onceflow/conformance';
import { type RenewableDelivery, toOnceflowError } from '@onceflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteSqsQueues } from '../src/index.js';
import { assertSqsAnswers, testClient, testTransport, uniqueQueue } from './sqs.js';

// Behaviour of real AWS that ElasticMQ does not share, and that the adapter enforces itself.
const client = testClient();
await assertSqsAnswers(client);
afterAll(() => client.destroy());

/** Names of the SQS commands `client` sends from now on. */
function recordCommands() {
  const names: string[] = [];
  const name = `record-${Math.random()}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      names.push(context.commandName ?? '');
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { names, stop: () => client.middlewareStack.remove(name) };
}

async function fixture(lockMs: number) {
  const queue = uniqueQueue('aws');
  const fifo = true;
  const transport = testTransport(client, { queue, fifo, lockMs });
  await transport.start();
  return {
    transport,
    async [Symbol.asyncDispose]() {
      await transport.close();
      await deleteSqsQueues(client, { queue, fifo });
    },
  };
}

describe('AWS behaviour the adapter enforces itself', () => {
  it('refuses an ack after the visibility is lost without sending a delete (AWS accepts outdated receipt handles)', async () => {
    await using fx = await fixture(1000);
    const event = testEnvelope();
    let lateAck: string | undefined;
    let deletesAfterLoss: number | undefined;
    const record = recordCommands();
    try {
      const spy = createHandlerSpy(async (d) => {
        if (d.attempt > 1) return d.ack();
        await new Promise((r) => d.signal.addEventListener('abort', r));
        const before = record.names.length;
        lateAck = await d.ack().then(
          () => 'resolved',
          (err: unknown) => toOnceflowError(err).code,
        );
        deletesAfterLoss = record.names
          .slice(before)
          .filter((n) => n.startsWith('DeleteMessage')).length;
      });
      await fx.transport.consume(spy.handler(), { concurrency: 2 });
      await fx.transport.publish([{ envelope: event }]);
      await spy.waitFor(event.id, 'processed', { attempt: 2 });
      await waitUntil(() => lateAck !== undefined, { timeoutMs: 2000, message: 'the late ack' });
      expect(lateAck).toBe('LOCK_LOST');
      expect(deletesAfterLoss).toBe(0);
    } finally {
      record.stop();
    }
  });

  it('refuses to renew a lock past 12 hours from receipt (ElasticMQ has no such limit) and sends nothing', async () => {
    await using fx = await fixture(12 * 3_600_000); // the longest lockMs: any renewal passes 12 h
    const event = testEnvelope();
    const record = recordCommands();
    let refused: unknown;
    try {
      const spy = createHandlerSpy(async (d) => {
        const before = record.names.length;
        refused = await (d as RenewableDelivery).renewLock().catch((err: unknown) => err);
        expect(record.names.slice(before)).toEqual([]);
        expect(d.signal.aborted, 'the lock itself is still held').toBe(false);
        await d.ack();
      });
      await fx.transport.consume(spy.handler(), { concurrency: 1 });
      await fx.transport.publish([{ envelope: event }]);
      await spy.waitFor(event.id, 'processed');
      expect(refused).toBeInstanceOf(RangeError);
    } finally {
      record.stop();
    }
  });
});
