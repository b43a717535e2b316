import { randomBytes } from 'node:crypto';
import {
  createRabbitMqTransport,
  defaultAmqpUrl,
  deleteRabbitMqQueues,
} from '@onceflow/adapter-rabbitmq';
import type { Delivery } from '@onceflow/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { captureOutput, event, waitFor } from './helpers.js';

// The shared RabbitMQ; a queue of this run's own, deleted afterwards.
const url = process.env.ONCEFLOW_AMQP_URL ?? defaultAmqpUrl();
const queue = `onceflow-cli-${randomBytes(4).toString('hex')}`;
const transport = createRabbitMqTransport({ url, queue });
const env = { ONCEFLOW_AMQP_URL: url };

const run = async (...argv: string[]) => {
  const io = captureOutput();
  const code = await runCli(['--store', 'rabbitmq', '--queue', queue, ...argv], {
    output: io.output,
    env,
  });
  return { code, ...io };
};

async function deadLetterIds(): Promise<string[]> {
  const { code, json } = await run('dead-letters', 'list', '--json');
  expect(code).toBe(0);
  return (json().deadLetters as { id: string }[]).map((d) => d.id);
}

/** Consumes the work queue until `n` deliveries arrived, acking each. */
async function drain(n: number): Promise<Delivery[]> {
  const got: Delivery[] = [];
  const sub = await transport.consume(
    async (d) => {
      got.push(d);
      await d.ack();
    },
    { concurrency: 1, lockMs: 30_000 },
  );
  await waitFor(() => got.length >= n, `${n} deliveries`);
  await sub.close();
  return got;
}

beforeAll(async () => {
  await transport.start();
  // One at a time, so the dead-letter queue holds them in publish order.
  for (const id of ['evt_1', 'evt_2', 'evt_3']) {
    await transport.publish([{ envelope: event(id) }]);
  }
  const sub = await transport.consume(
    (d) =>
      d.deadLetter({
        reason: 'schema: amount must be a string',
        error: { code: 'SCHEMA', name: 'SchemaError', message: 'amount must be a string' },
      }),
    { concurrency: 1, lockMs: 30_000 },
  );
  await waitFor(async () => (await transport.deadLetters.count()) === 3, 'dead letters', 10_000);
  await sub.close();
}, 30_000);

afterAll(async () => {
  await transport.close();
  await deleteRabbitMqQueues({ url, queue });
});

describe('--store rabbitmq dead letters', () => {
  it('lists oldest first and shows one in full', async () => {
    const { code, out } = await run('dead-letters', 'list');
    expect(code).toBe(0);
    expect(out.slice(1, 4).map((l) => l.match(/evt_\d/)?.[0])).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(out[1]).toContain('schema: amount must be a string');
    expect(out.at(-1)).toBe('3 dead letters in total, showing the oldest 3.');

    const ids = await deadLetterIds();
    expect(ids).toEqual(['stripe:evt_1', 'stripe:evt_2', 'stripe:evt_3']);
    const show = await run('dead-letters', 'show', 'stripe:evt_2');
    expect(show.code).toBe(0);
    expect(show.text()).toContain('last error:        SCHEMA SchemaError: amount must be a string');
    expect(show.text()).toContain('{"id":"evt_2","amount":42}');
  });

  it('redrive is a dry run by default, and with --apply moves one back with attempt 1', async () => {
    const dry = await run('dead-letters', 'redrive', 'stripe:evt_1');
    expect(dry.out[0]).toBe('DRY RUN: would redrive 1 dead letter. Nothing was changed.');
    expect(await deadLetterIds()).toHaveLength(3);

    const { code, out } = await run('dead-letters', 'redrive', 'stripe:evt_1', '--apply');
    expect(code).toBe(0);
    expect(out[0]).toBe('Redrove 1 dead letter: stripe:evt_1.');
    expect(await deadLetterIds()).toEqual(['stripe:evt_2', 'stripe:evt_3']);
    const [back] = await drain(1);
    expect([back?.envelope.id, back?.attempt]).toEqual(['evt_1', 1]);
  });

  it('purge refuses an unknown id, then deletes exactly the chosen ones with --apply', async () => {
    const unknown = await run('dead-letters', 'purge', 'stripe:nope', '--apply');
    expect(unknown.code).toBe(1);
    expect(unknown.errText()).toContain('"stripe:nope"');

    const { code, out } = await run('dead-letters', 'purge', 'stripe:evt_3', '--apply');
    expect(code).toBe(0);
    expect(out[0]).toBe('Purged 1 dead letter: stripe:evt_3.');
    expect(await deadLetterIds()).toEqual(['stripe:evt_2']);
  });

  it('refuses a queue that does not exist instead of declaring it', async () => {
    const io = captureOutput();
    const code = await runCli(
      ['--store', 'rabbitmq', '--queue', `${queue}-typo`, 'dead-letters', 'list'],
      { output: io.output, env },
    );
    expect(code).toBe(1);
    expect(io.errText()).toContain(`no RabbitMQ queue "${queue}-typo"`);
  });
});
