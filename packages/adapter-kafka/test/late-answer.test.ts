import { randomBytes } from 'node:crypto';
import { type KafkaServer, startKafkaServer } from '@onceflow/test-servers';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKafkaTransport } from '../src/index.js';
import { testOptions } from './brokers.js';

// A broker of this test's own (9392/9393): it is paused, and the shared one on 9092 never is.
let server: KafkaServer;
beforeAll(async () => {
  server = await startKafkaServer({ port: 9392 });
}, 180_000);
afterAll(() => server?.[Symbol.asyncDispose]());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const envelope = (id: string) => ({
  id,
  source: 'test',
  type: 'late.answer',
  payload: new TextEncoder().encode('{}'),
  headers: {},
  receivedAt: new Date().toISOString(),
  payloadHash: id,
});

// Found by the soak: a request the broker wrote after kafkajs had given up on it left kafkajs's
// sequence numbers behind the broker's. Later publishes of the same length were acknowledged and
// never written; every other length was refused with OUT_OF_ORDER_SEQUENCE_NUMBER, for good.
it('a publish whose request is written after its deadline does not make later acknowledged publishes vanish, and publishing recovers', async () => {
  const topic = `onceflow-late-${randomBytes(3).toString('hex')}`;
  const transport = createKafkaTransport({ ...testOptions(topic), brokers: [...server.brokers] });
  await transport.start();
  const acked = new Set<string>();
  let n = 0;
  let ackedAfterLastPause = 0;
  let paused = false;
  // Five single-event publishes every 100 ms, so a request is in flight when the broker pauses.
  const tick = setInterval(() => {
    for (let k = 0; k < 5; k++) {
      const id = `evt_${n++}`;
      transport.publish([{ envelope: envelope(id) }]).then(
        () => {
          acked.add(id);
          if (!paused) ackedAfterLastPause++;
        },
        () => {},
      );
    }
  }, 100);
  try {
    for (const pauseMs of [1_500, 3_000]) {
      await sleep(4_000);
      paused = true;
      server.pause();
      await sleep(pauseMs);
      server.resume();
      paused = false;
      ackedAfterLastPause = 0;
    }
    await sleep(15_000);
  } finally {
    clearInterval(tick);
    server.resume();
  }
  await sleep(2_000);
  expect(ackedAfterLastPause).toBeGreaterThan(0);

  const seen = new Set<string>();
  await transport.consume(
    async (d) => {
      seen.add(d.envelope.id);
      await d.ack();
    },
    { concurrency: 8 },
  );
  for (let t = 0; t < 120 && [...acked].some((id) => !seen.has(id)); t++) await sleep(500);
  await transport.close();
  expect([...acked].filter((id) => !seen.has(id))).toEqual([]);
}, 240_000);
