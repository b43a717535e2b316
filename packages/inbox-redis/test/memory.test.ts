import { createEnvelope } from '@onceflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisInbox } from '../src/index.js';
import { connect, deleteKeys, randomPrefix } from './helpers.js';

const redis = connect();
const store = createRedisInbox({ redis, prefix: randomPrefix() });
const EVENTS = 1000;
const lease = { leaseMs: 60_000 };

afterAll(async () => {
  await deleteKeys(redis, store.keyBase);
  await redis.quit();
});

/** A Stripe-like event as the receiver claims it: 28-character id, trace context, JSON payload. */
const envelope = (i: number) =>
  createEnvelope({
    source: 'stripe',
    id: `evt_1NqZ2x2eZvKYlo2C${String(i).padStart(8, '0')}`,
    type: 'charge.succeeded',
    key: 'cus_OaBcDeFgHiJkLm',
    headers: {
      traceparent: `00-${'4bf92f3577b34da6a3ce929d'}${String(i).padStart(8, '0')}-00f067aa0ba902b7-01`,
    },
    payload: { id: `ch_${i}`, amount: 1999, currency: 'eur' },
  });

/** received → enqueued → processing → completed, the way a receiver and a worker take it. */
async function complete(i: number): Promise<void> {
  const env = envelope(i);
  const claim = await store.claim(env, lease);
  if (claim.status !== 'new') throw new Error(claim.status);
  await store.markEnqueued(env.source, env.id, claim.token);
  const begun = await store.begin(env, { ...lease, attempt: 1, consumer: 'worker-1' });
  if (begun.status !== 'acquired') throw new Error(begun.status);
  await store.complete(env.source, env.id, begun.token);
}

describe('redis record memory', () => {
  it('a typical completed record is a listpack hash; prints bytes per record with its index entries', async () => {
    for (let i = 0; i < EVENTS; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => complete(i + j)));
    }
    const first = envelope(0);
    const row = `${store.keyBase}r:${first.source.length}:${first.source}:${first.id}`;
    expect(await redis.object('ENCODING', row)).toBe('listpack');
    const rowBytes = Number(await redis.memory('USAGE', row));
    const indexBytes = async (name: string) =>
      Number(await redis.memory('USAGE', `${store.keyBase}${name}`, 'SAMPLES', 0)) / EVENTS;
    const done = await indexBytes('done');
    const completed = await indexBytes('s:d');
    const total = rowBytes + done + completed;
    console.log(
      `memory per completed record: row ${rowBytes} B, done entry ${done.toFixed(0)} B, ` +
        `s:d entry ${completed.toFixed(0)} B, total ${total.toFixed(0)} B`,
    );
    expect(rowBytes, 'the row').toBeLessThan(600);
    expect(total, 'row and index entries').toBeLessThan(900);
  });
});
