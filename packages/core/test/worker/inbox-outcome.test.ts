import { describe, expect, it } from 'vitest';
import { INBOX_HEADER } from '../../src/contracts/inbox.js';
import { createEnvelope } from '../../src/envelope.js';
import { ConfigError, NonRetryableError } from '../../src/errors.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { defineHandler } from '../../src/worker/index.js';
import { event, fixture, waitFor, withOutages } from './fixture.js';

/** A receiver's inbox beside the fixture's records: the claim is made there, as a receiver would. */
async function inboxWith(...envelopes: Parameters<typeof event>[]) {
  const inbox = createMemoryStore();
  const sent = envelopes.map((args) => event(...args));
  for (const env of sent) {
    const claim = await inbox.claim(env, { leaseMs: 10_000 });
    if (claim.status !== 'new') throw new Error(claim.status);
    await inbox.markEnqueued(env.source, env.id, claim.token);
  }
  return { inbox, sent };
}

const ok = defineHandler({ type: 'ok', handle: async () => {} });
const rejects = defineHandler({
  type: 'bad',
  handle: async () => {
    throw new NonRetryableError('card declined');
  },
});

describe('worker with a receiver inbox beside its records (inbox option)', () => {
  it('marks completed, dead-lettered and unknown-type events processed in the inbox before acking', async () => {
    await using f = fixture();
    const { inbox, sent } = await inboxWith(['ok', {}], ['bad', {}], ['nobody', {}], ['ok', {}]);
    expect((await inbox.stats()).enqueued).toBe(4);
    await f.worker({ handlers: [ok, rejects], inbox, unknownType: 'ack' });
    await f.publish(...sent);
    await f.drained();
    const stats = await inbox.stats();
    expect(stats).toMatchObject({ enqueued: 0, processed: 4, pending: 0 });
    expect(stats.oldestUnprocessedAt).toBe(undefined);
    expect(await f.store.count({ state: 'completed' })).toBe(2);
    expect(await f.store.count({ state: 'dead-lettered' })).toBe(1);
  });

  it('marks a redelivery the record already finished (begin answers processed or dead-lettered)', async () => {
    await using f = fixture();
    const { inbox, sent } = await inboxWith(['ok', {}], ['bad', {}]);
    const [done, dead] = sent;
    if (!done || !dead) throw new Error('unreachable');
    // The records finished both before a crash; the inbox never heard of it.
    const lease = await f.store.begin(done, { leaseMs: 10_000, attempt: 1 });
    if (lease.status !== 'acquired') throw new Error(lease.status);
    await f.store.complete(done.source, done.id, lease.token);
    await f.store.deadLetter(dead, undefined, { reason: 'test', attempts: 1 });
    await f.worker({ handlers: [ok, rejects], inbox });
    await f.publish(...sent);
    await f.drained();
    expect(await inbox.stats()).toMatchObject({ enqueued: 0, processed: 2 });
  });

  it('retries the delivery, not acks it, while the inbox does not answer, and marks it once it does', async () => {
    await using f = fixture({ maxDelayMs: 100 });
    const { inbox, sent } = await inboxWith(['ok', {}]);
    const outage = withOutages(inbox);
    outage.down.add('markProcessed' as never);
    await f.worker({ handlers: [ok], inbox: outage.records });
    await f.publish(...sent);
    await waitFor(() => (outage.calls.get('markProcessed') ?? 0) >= 1, { what: 'a mark tried' });
    expect(f.transport.broker.depth(f.transport.queue)).toBe(1); // kept by the broker
    outage.down.clear();
    await f.drained(10_000);
    expect(await inbox.stats()).toMatchObject({ enqueued: 0, processed: 1 });
    expect(await f.store.count({ state: 'completed' })).toBe(1);
  });

  it('refuses an inbox without InboxOutcomes, and an inbox with claimCheck, with ConfigError', async () => {
    await using f = fixture();
    const { markProcessed: _, ...plain } = createMemoryStore();
    await expect(f.worker({ handlers: [ok], inbox: plain as never })).rejects.toThrow(
      /inbox has no markProcessed \(InboxOutcomes\)/,
    );
    await expect(
      f.worker({ handlers: [ok], inbox: createMemoryStore(), claimCheck: true }),
    ).rejects.toThrow(ConfigError);
  });

  it('takes records as its own inbox, or another instance on the same rows, as the usual shape: nothing more is written', async () => {
    await using f = fixture();
    const marks = { n: 0 };
    const sameRows = {
      ...f.store,
      markProcessed: async () => {
        marks.n++;
      },
    };
    await f.worker({ handlers: [ok], inbox: f.store });
    await f.worker({ handlers: [ok], inbox: sameRows });
    const sent = [event('ok', {}), event('ok', {}), event('ok', {})];
    await f.publish(...sent);
    for (const env of sent) await f.recordIn(env.id, 'completed');
    expect(marks.n).toBe(0);
  });

  it('logs one error when events stamped by another inbox reach a worker without the inbox option, and none with it', async () => {
    const stamped = (inboxId: string, i: number) =>
      createEnvelope({
        id: `stamped_${i}_${Math.random().toString(36).slice(2)}`,
        source: 'test',
        type: 'ok',
        payload: {},
        headers: { [INBOX_HEADER]: inboxId },
      });
    const foreign = createMemoryStore();
    const forgotten = /is not this worker's records .* and not its inbox option/;
    {
      await using f = fixture();
      await f.worker({ handlers: [ok] });
      await f.publish(stamped(foreign.storeId, 1), stamped(foreign.storeId, 2));
      await f.publish(stamped(f.store.storeId, 3)); // claimed in its own records: fine
      await f.drained();
      const errors = f.logs.filter((l) => forgotten.test(l.msg));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ inbox: foreign.storeId, records: f.store.storeId });
    }
    {
      await using f = fixture();
      await f.worker({ handlers: [ok], inbox: foreign });
      await f.publish(stamped(foreign.storeId, 4));
      await f.drained();
      expect(f.logs.filter((l) => forgotten.test(l.msg))).toHaveLength(0);
    }
  });
});
