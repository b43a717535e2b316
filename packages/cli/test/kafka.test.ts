import { randomBytes } from 'node:crypto';
import { createKafkaTransport, defaultBrokers, removeKafkaTopology } from '@onceflow/adapter-kafka';
import type { Delivery } from '@onceflow/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { captureOutput, event, waitFor } from './helpers.js';

// The shared Kafka (`pnpm brokers:up kafka`); a topic set of this run's own, deleted afterwards.
const brokers = defaultBrokers();
const topic = `onceflow-cli-${randomBytes(4).toString('hex')}`;
const options = { topic, brokers, partitions: 1, fetchWaitMs: 200, sessionTimeoutMs: 6_000 };
const transport = createKafkaTransport(options);
const env = { ONCEFLOW_KAFKA_BROKERS: brokers.join(',') };

const run = async (...argv: string[]) => {
  const io = captureOutput();
  const code = await runCli(['--store', 'kafka', '--queue', topic, ...argv], {
    output: io.output,
    env,
  });
  return { code, ...io };
};

async function deadLetters(): Promise<{ id: string; eventId: string }[]> {
  const { code, json } = await run('dead-letters', 'list', '--json');
  expect(code).toBe(0);
  return json().deadLetters as { id: string; eventId: string }[];
}

beforeAll(async () => {
  await transport.start();
  for (const id of ['evt_1', 'evt_2', 'evt_3']) await transport.publish([{ envelope: event(id) }]);
  const sub = await transport.consume(
    (d) =>
      d.deadLetter({
        reason: 'schema: amount must be a string',
        error: { code: 'SCHEMA', name: 'SchemaError', message: 'amount must be a string' },
      }),
    { concurrency: 1, lockMs: 30_000 },
  );
  await waitFor(async () => (await transport.deadLetters.count()) === 3, 'dead letters', 30_000);
  await sub.close();
}, 60_000);

afterAll(async () => {
  await transport.close();
  await removeKafkaTopology(options);
});

describe('--store kafka dead letters', () => {
  it('lists oldest first and shows one in full', async () => {
    const { code, out } = await run('dead-letters', 'list');
    expect(code).toBe(0);
    expect(out.slice(1, 4).map((l) => l.match(/evt_\d/)?.[0])).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(out[1]).toContain('schema: amount must be a string');
    const second = (await deadLetters())[1];
    const show = await run('dead-letters', 'show', second?.id ?? '');
    expect(show.code).toBe(0);
    expect(show.text()).toContain('last error:        SCHEMA SchemaError: amount must be a string');
    expect(show.text()).toContain('{"id":"evt_2","amount":42}');
  });

  it('redrives one with --apply (attempt 1 again) and purges another', async () => {
    const [first, , third] = await deadLetters();
    const dry = await run('dead-letters', 'redrive', first?.id ?? '');
    expect(dry.out[0]).toBe('DRY RUN: would redrive 1 dead letter. Nothing was changed.');
    const redrive = await run('dead-letters', 'redrive', first?.id ?? '', '--apply');
    expect(redrive.code).toBe(0);
    const purge = await run('dead-letters', 'purge', third?.id ?? '', '--apply');
    expect(purge.code).toBe(0);
    expect((await deadLetters()).map((d) => d.eventId)).toEqual(['evt_2']);

    const got: Delivery[] = [];
    const sub = await transport.consume(
      async (d) => {
        got.push(d);
        await d.ack();
      },
      { concurrency: 1, lockMs: 30_000 },
    );
    await waitFor(() => got.length >= 1, 'the redriven event', 30_000);
    await sub.close();
    expect([got[0]?.envelope.id, got[0]?.attempt]).toEqual(['evt_1', 1]);
  }, 60_000);

  it('refuses a topic without a dead-letter topic instead of creating it', async () => {
    const io = captureOutput();
    const code = await runCli(
      ['--store', 'kafka', '--queue', `${topic}-typo`, 'dead-letters', 'list'],
      {
        output: io.output,
        env,
      },
    );
    expect(code).toBe(1);
    expect(io.errText()).toContain(`no Kafka topic "${topic}-typo.dlq"`);
  });
});
