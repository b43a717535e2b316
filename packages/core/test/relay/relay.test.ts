import { describe, expect, it, vi } from 'vitest';
import { createEnvelope, type Envelope } from '../../src/envelope.js';
import { StoreUnavailableError, TransportUnavailableError } from '../../src/errors.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createRelay } from '../../src/relay.js';
import { postStripe, stripeEvent, until } from '../receiver/helpers.js';
import { startReceiver } from '../receiver/setup.js';

const envelope = (id: string): Envelope =>
  createEnvelope({
    id,
    source: 'stripe',
    type: 'charge.succeeded',
    key: 'cus_1',
    payload: `{"id":"${id}"}`,
  });

/** A memory inbox on a hand-driven clock, a memory transport with a spied publish, and a relay. */
function setup(options: { olderThanMs?: number; leaseMs?: number } = {}) {
  let now = Date.parse('2030-01-01T00:00:00Z');
  const inbox = createMemoryStore({ now: () => now });
  const transport = createMemoryTransport();
  const publish = vi.spyOn(transport, 'publish');
  const metrics = createMetrics();
  const relay = createRelay({ inbox, transport, metrics, batchSize: 2, ...options });
  /** What the receiver does before it dies between claim and publish. */
  const crashAfterClaim = async (id: string) => {
    const claim = await inbox.claim(envelope(id), { leaseMs: 30_000 });
    expect(claim.status).toBe('new');
  };
  const advance = (ms: number) => {
    now += ms;
  };
  return { inbox, transport, publish, metrics, relay, crashAfterClaim, advance };
}

describe('relay', () => {
  it('re-publishes a claim whose request died before publishing, once its lease ran out', async () => {
    const t = setup();
    await t.crashAfterClaim('evt_orphan');

    expect(await t.relay.runOnce()).toBe(0); // lease still live: the request may yet publish
    t.advance(61_000);
    expect(await t.relay.runOnce()).toBe(1);

    expect(t.publish).toHaveBeenCalledTimes(1);
    expect(t.publish.mock.calls[0]![0][0]!.envelope.id).toBe('evt_orphan');
    expect(t.transport.broker.depth('default')).toBe(1);
    expect(await t.inbox.stats()).toMatchObject({ pending: 0, enqueued: 1 });
    expect((await t.metrics.relayRepublished.get()).values[0]?.value).toBe(1);
    expect(await t.relay.runOnce()).toBe(0); // enqueued now: nothing left to do
  });

  it('drains several batches in one run', async () => {
    const t = setup();
    for (const id of ['a', 'b', 'c', 'd', 'e']) await t.crashAfterClaim(id);
    t.advance(61_000);

    expect(await t.relay.runOnce()).toBe(5);
    expect(t.publish).toHaveBeenCalledTimes(3); // batchSize 2
    expect(t.transport.broker.depth('default')).toBe(5);
  });

  it('releases nothing when publish fails: the next run after the lease retries', async () => {
    const t = setup({ leaseMs: 10_000 });
    await t.crashAfterClaim('evt_retry');
    t.advance(61_000);
    t.publish.mockRejectedValueOnce(new TransportUnavailableError('broker down'));

    await expect(t.relay.runOnce()).rejects.toThrow('broker down');
    expect(await t.inbox.stats()).toMatchObject({ pending: 1 });
    expect(await t.relay.runOnce()).toBe(0); // the relay's own lease holds it
    t.advance(10_001);
    expect(await t.relay.runOnce()).toBe(1);
    expect(t.transport.broker.depth('default')).toBe(1);
  });

  it('keeps going when markEnqueued fails; the copy published again is deduped by the broker', async () => {
    const t = setup({ leaseMs: 10_000 });
    await t.crashAfterClaim('evt_mark');
    t.advance(61_000);
    vi.spyOn(t.inbox, 'markEnqueued').mockRejectedValueOnce(new StoreUnavailableError('timeout'));

    expect(await t.relay.runOnce()).toBe(1);
    t.advance(10_001);
    expect(await t.relay.runOnce()).toBe(1);
    expect(t.publish).toHaveBeenCalledTimes(2);
    expect(t.transport.broker.depth('default')).toBe(1); // same dedupe key (the event id)
  });

  it('runs on start and stops on close; start after close is a no-op', async () => {
    const t = setup({ olderThanMs: 0 });
    const takeStale = vi.spyOn(t.inbox, 'takeStale');
    t.relay.start();
    await until(() => takeStale.mock.calls.length >= 1);
    await t.relay.close();
    t.relay.start();
    expect(takeStale).toHaveBeenCalledTimes(1); // the 10 s interval never fired
  });
});

describe('relay with the receiver', () => {
  it("lets a sender retry take over a dead request's claim once its lease ran out", async () => {
    await using r = await startReceiver();
    const body = stripeEvent('evt_stale');
    const dead = createEnvelope({ id: 'evt_stale', source: 'stripe', type: 'x', payload: body });
    const claim = await r.inbox.claim(dead, { leaseMs: 30 });
    expect(claim.status).toBe('new');

    const statuses: number[] = [];
    await until(async () => {
      statuses.push((await postStripe(r.url, body)).status);
      return statuses.at(-1) !== 503;
    });
    expect(statuses.at(-1)).toBe(202); // stale-pending: this request now owns the claim
    expect(r.transport.broker.depth('default')).toBe(1);
  });

  it('completes a delivery whose markEnqueued failed, and the sender retry stays a duplicate', async () => {
    await using r = await startReceiver({ config: { leaseMs: 20 } });
    r.spies.markEnqueued.mockRejectedValueOnce(new StoreUnavailableError('timeout'));
    const body = stripeEvent('evt_relay');
    expect((await postStripe(r.url, body)).status).toBe(202);
    expect((await r.inbox.stats()).pending).toBe(1);

    const relay = createRelay({ inbox: r.inbox, transport: r.transport, olderThanMs: 0 });
    await until(async () => (await relay.runOnce()) === 1);
    expect(r.spies.publish).toHaveBeenCalledTimes(2);
    expect(r.transport.broker.depth('default')).toBe(1); // broker dedupe absorbed the re-publish
    expect((await postStripe(r.url, body)).status).toBe(200);
  });
});
