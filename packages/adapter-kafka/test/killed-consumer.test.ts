import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { handleOnce, testEnvelope, waitUntil } from '@onceflow/conformance';
import type { Delivery } from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { afterAll, expect, it } from 'vitest';
import { createKafkaTransport, removeKafkaTopology } from '../src/index.js';
import { testOptions } from './brokers.js';
import { waitForGroup } from './group.js';

const script = fileURLToPath(new URL('./fixtures/consumer-process.ts', import.meta.url));
const topic = `onceflow-killed-${randomBytes(3).toString('hex')}`;
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await removeKafkaTopology(testOptions(topic));
});

it('a record whose consumer is killed mid-handler is handled by another group member, its effect once', async () => {
  const transport = createKafkaTransport(testOptions(topic));
  await transport.start();
  const effects = new Map<string, number>();
  const handledBy = new Map<string, number[]>();
  const guard = handleOnce(createMemoryStore(), async (d: Delivery) => {
    effects.set(d.envelope.id, (effects.get(d.envelope.id) ?? 0) + 1);
  });
  const sub = await transport.consume(
    async (d) => {
      handledBy.set(d.envelope.id, [...(handledBy.get(d.envelope.id) ?? []), d.attempt]);
      await guard(d);
    },
    { concurrency: 4 },
  );
  await waitForGroup(transport.groupId, 1);

  const child = fork(script, [topic], {
    execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const childGot: string[] = [];
  child.on('message', (m: { type: string; id?: string }) => {
    if (m.type === 'delivery' && m.id) childGot.push(m.id);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForGroup(transport.groupId, 2);

  // distinct keys spread the records over both partitions, so the child gets some
  const events = Array.from({ length: 20 }, (_, i) => testEnvelope({ key: `k-${i}` }));
  await transport.publish(events.map((envelope) => ({ envelope })));
  await waitUntil(() => childGot.length > 0, { timeoutMs: 20_000, message: 'child to receive' });
  const victim = childGot[0] as string;
  child.kill('SIGKILL');
  await exited;

  await waitUntil(() => events.every((e) => effects.get(e.id) === 1), {
    timeoutMs: 30_000,
    message: 'every event handled in the surviving member',
  });
  expect(childGot, 'the killed member held one record (concurrency 1)').toEqual([victim]);
  expect(
    handledBy.get(victim),
    'the victim handled again by the survivor, with the attempt it had (Kafka keeps no delivery count)',
  ).toEqual([1]);
  for (const e of events) expect(effects.get(e.id), `effect of ${e.id}`).toBe(1);
  await sub.close();
  await transport.close();
}, 90_000);
