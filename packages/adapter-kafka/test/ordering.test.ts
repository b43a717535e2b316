import { randomBytes } from 'node:crypto';
import { createHandlerSpy, testEnvelope } from '@onceflow/conformance';
import { afterAll, expect, it } from 'vitest';
import { createKafkaTransport, removeKafkaTopology } from '../src/index.js';
import { testOptions } from './brokers.js';

const topic = `onceflow-order-${randomBytes(3).toString('hex')}`;
afterAll(() => removeKafkaTopology(testOptions(topic)));

it('keeps per-key order on first delivery; a retry moves the record behind later ones, as orderingPerKey: false declares', async () => {
  const transport = createKafkaTransport(testOptions(topic));
  expect(transport.capabilities.orderingPerKey).toBe(false);
  await transport.start();
  const a = Array.from({ length: 4 }, (_, i) => testEnvelope({ key: 'acct-a', payload: { i } }));
  const b = Array.from({ length: 4 }, (_, i) => testEnvelope({ key: 'acct-b', payload: { i } }));
  const retried = a[1];
  const running = new Map<string, number>();
  let overlap = 0;
  const spy = createHandlerSpy(async (d) => {
    const key = d.envelope.key ?? '';
    running.set(key, (running.get(key) ?? 0) + 1);
    if ((running.get(key) ?? 0) > 1) overlap++;
    await new Promise((r) => setTimeout(r, 15));
    running.set(key, (running.get(key) ?? 1) - 1);
    if (d.envelope.id === retried?.id && d.attempt === 1) return d.retry({ delayMs: 0 });
    await d.ack();
  });
  const sub = await transport.consume(spy.handler(), { concurrency: 4 });
  await transport.publish([...a, ...b].map((envelope) => ({ envelope })));
  await spy.waitForCount('processed', 8);
  const order = (key: string, kind: 'received' | 'processed') =>
    spy
      .of(kind)
      .filter((e) => e.delivery.envelope.key === key && (kind === 'processed' || e.attempt === 1))
      .map((e) => e.id);
  expect(overlap, 'two handlers of one key at once').toBe(0);
  expect(order('acct-a', 'received'), 'first deliveries in publish order').toEqual(
    a.map((e) => e.id),
  );
  expect(order('acct-b', 'processed')).toEqual(b.map((e) => e.id));
  const ids = a.map((e) => e.id);
  expect(order('acct-a', 'processed'), 'the retried record comes after the later ones').toEqual([
    ids[0],
    ids[2],
    ids[3],
    ids[1],
  ]);
  await sub.close();
  await transport.close();
});
