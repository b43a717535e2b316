import { describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../src/errors.js';
import { defineHandler } from '../../src/worker/index.js';
import { event, fixture, sleep, waitFor, withOutages } from './fixture.js';

describe('when the event record cannot be written', () => {
  it('a dead letter the store refuses is not acked: the message comes back and is recorded once the store answers', async () => {
    // maxDelayMs 50: the worker offers an unrecorded message again after 50 ms.
    await using f = fixture({ lockMs: 200, maxDelayMs: 50 });
    const outages = withOutages(f.store);
    let calls = 0;
    await f.worker({
      records: outages.records,
      handlers: [
        defineHandler({
          type: 'refund',
          async handle() {
            calls++;
            throw new NonRetryableError('charge already refunded');
          },
        }),
      ],
    });
    outages.down.add('deadLetter');
    const env = event('refund', {});
    await f.publish(env);
    await waitFor(() => f.logs.some((l) => l.msg.startsWith('could not record the dead letter')), {
      what: 'the refused dead letter',
    });
    // Not acked: the broker still holds it, and the record is not a dead letter yet.
    expect(f.transport.broker.depth(f.transport.queue)).toBe(1);
    expect((await f.store.get('test', env.id))?.state).toBe('processing');

    outages.down.clear();
    const letter = await f.recordIn(env.id, 'dead-lettered');
    await f.drained();
    expect(letter.reason).toBe('charge already refunded');
    expect(letter.attempts).toBeGreaterThan(1);
    expect(letter.history.filter((h) => h.state === 'dead-lettered')).toHaveLength(1);
    // The first attempt's lease outlived its refused dead letter; the handler ran once more after it.
    expect(calls).toBe(2);
    expect(outages.calls.get('deadLetter')).toBe(2);
  });

  it("past the transport's deliveryLimit, the broker's dead letter lands in the record (note broker dead-letter)", async () => {
    await using f = fixture({ deliveryLimit: 5, maxDelayMs: 20 });
    const outages = withOutages(f.store);
    let calls = 0;
    await f.worker({
      records: outages.records,
      retry: { maxAttempts: 4, baseDelayMs: 1 },
      handlers: [
        defineHandler({
          type: 'order.placed',
          async handle() {
            calls++;
          },
        }),
      ],
    });
    outages.down.add('*'); // every delivery fails before a handler runs; nothing is recorded
    const env = event('order.placed', {});
    await f.publish(env);
    const dlq = `${f.transport.queue}.dead-letters`;
    await waitFor(
      () => f.transport.broker.depth(f.transport.queue) === 0 && f.transport.broker.depth(dlq),
      { what: "the message in the broker's dead-letter queue" },
    );
    await sleep(60); // the worker tries to record it, and keeps it on the broker meanwhile
    expect(f.transport.broker.depth(dlq)).toBe(1);
    expect(await f.store.get('test', env.id)).toBeUndefined();

    outages.down.clear();
    const letter = await f.recordIn(env.id, 'dead-lettered');
    await waitFor(() => f.transport.broker.depth(dlq) === 0, { what: 'the broker copy acked' });
    expect(letter).toMatchObject({
      reason: 'delivery limit exceeded after 5 deliveries',
      attempts: 5,
    });
    expect(letter.history).toEqual([
      expect.objectContaining({ state: 'dead-lettered', attempt: 5, note: 'broker dead-letter' }),
    ]);
    expect(letter.envelope?.payloadHash).toBe(env.payloadHash);
    expect(calls).toBe(0);
    expect(f.logs.some((l) => l.msg.startsWith('could not record a broker dead letter'))).toBe(
      true,
    );
  });

  it("with brokerDeadLetters: false the worker leaves the broker's dead letters alone", async () => {
    await using f = fixture({ deliveryLimit: 2, maxDelayMs: 20 });
    const outages = withOutages(f.store);
    await f.worker({
      records: outages.records,
      brokerDeadLetters: false,
      retry: { maxAttempts: 1 },
      handlers: [defineHandler({ type: 'x', async handle() {} })],
    });
    outages.down.add('*');
    const env = event('x', {});
    await f.publish(env);
    const dlq = `${f.transport.queue}.dead-letters`;
    await waitFor(() => f.transport.broker.depth(dlq), { what: 'the broker dead letter' });
    outages.down.clear();
    await sleep(100);
    expect(f.transport.broker.depth(dlq)).toBe(1);
    expect(await f.store.get('test', env.id)).toBeUndefined();
  });
});
