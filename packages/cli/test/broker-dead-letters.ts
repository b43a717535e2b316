import type { Delivery, Transport } from '@onceflow/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { captureOutput, event, waitFor } from './helpers.js';

/** One broker store as the dead-letter commands see it. */
export interface BrokerStore {
  /** The `--store` name. */
  readonly store: string;
  /** The `--queue` value (queue or topic), unique to this run. */
  readonly queue: string;
  /** The environment the CLI reads the broker's address from. */
  readonly env: Readonly<Record<string, string>>;
  /** A transport on the same queue, for seeding and draining. */
  readonly transport: Transport;
  /** Deletes what the run created on the broker. */
  cleanup(): Promise<void>;
  /**
   * What the CLI says when `--queue` names something that does not exist; `undefined` for brokers
   * whose queues exist implicitly (BullMQ): there an unknown queue lists no dead letters.
   */
  readonly missingMessage: ((queue: string) => string) | undefined;
  /** Per-wait limit; brokers with group joins need more. Default 10 s. */
  readonly timeoutMs?: number;
}

const REASON = 'schema: amount must be a string';

/**
 * The dead-letter commands against a real broker store: list oldest first, show, redrive (a dry
 * run unless `--apply`; comes back with attempt 1), purge (unknown ids refused), and a missing
 * queue refused rather than created.
 */
export function describeBrokerDeadLetters(b: BrokerStore): void {
  const timeoutMs = b.timeoutMs ?? 10_000;
  const run = async (...argv: string[]) => {
    const io = captureOutput();
    const code = await runCli(['--store', b.store, '--queue', b.queue, ...argv], {
      output: io.output,
      env: b.env,
    });
    return { code, ...io };
  };
  const listed = async () => {
    const { code, json } = await run('dead-letters', 'list', '--json');
    expect(code).toBe(0);
    return json().deadLetters as { id: string; eventId: string }[];
  };
  const idOf = async (eventId: string) =>
    (await listed()).find((d) => d.eventId === eventId)?.id ?? `missing ${eventId}`;

  beforeAll(async () => {
    await b.transport.start();
    // One at a time, so the dead-letter store holds them in publish order.
    for (const id of ['evt_1', 'evt_2', 'evt_3'])
      await b.transport.publish([{ envelope: event(id) }]);
    const dead = new Set<string>();
    const sub = await b.transport.consume(
      async (d) => {
        await d.deadLetter({
          reason: REASON,
          error: { code: 'SCHEMA', name: 'SchemaError', message: 'amount must be a string' },
        });
        dead.add(d.envelope.id);
      },
      { concurrency: 1, lockMs: 30_000 },
    );
    await waitFor(() => dead.size === 3, 'three dead letters', timeoutMs);
    await sub.close();
    await waitFor(async () => (await b.transport.deadLetters.count()) === 3, 'count 3', timeoutMs);
  }, timeoutMs * 3);

  afterAll(async () => {
    await b.transport.close();
    await b.cleanup();
  });

  describe(`--store ${b.store} dead letters`, () => {
    it('lists oldest first and shows one in full', async () => {
      const { code, out } = await run('dead-letters', 'list');
      expect(code).toBe(0);
      expect(out.slice(1, 4).map((l) => l.match(/evt_\d/)?.[0])).toEqual([
        'evt_1',
        'evt_2',
        'evt_3',
      ]);
      expect(out[1]).toContain(REASON);
      const show = await run('dead-letters', 'show', await idOf('evt_2'));
      expect(show.code).toBe(0);
      expect(show.text()).toContain(
        'last error:        SCHEMA SchemaError: amount must be a string',
      );
      expect(show.text()).toContain('{"id":"evt_2","amount":42}');
    });

    it(
      'redrive is a dry run by default, and with --apply moves one back with attempt 1',
      async () => {
        const id = await idOf('evt_1');
        const dry = await run('dead-letters', 'redrive', id);
        expect(dry.out[0]).toBe('DRY RUN: would redrive 1 dead letter. Nothing was changed.');
        expect(await listed()).toHaveLength(3);

        const { code, out } = await run('dead-letters', 'redrive', id, '--apply');
        expect(code).toBe(0);
        expect(out[0]).toBe(`Redrove 1 dead letter: ${id}.`);
        expect((await listed()).map((d) => d.eventId)).toEqual(['evt_2', 'evt_3']);

        const got: Delivery[] = [];
        const sub = await b.transport.consume(
          async (d) => {
            got.push(d);
            await d.ack();
          },
          { concurrency: 1, lockMs: 30_000 },
        );
        await waitFor(() => got.length >= 1, 'the redriven event', timeoutMs);
        await sub.close();
        expect([got[0]?.envelope.id, got[0]?.attempt]).toEqual(['evt_1', 1]);
      },
      timeoutMs * 3,
    );

    it('purge refuses an unknown id, then deletes exactly the chosen one with --apply', async () => {
      const unknown = await run('dead-letters', 'purge', 'no-such-dead-letter', '--apply');
      expect(unknown.code).toBe(1);
      expect(unknown.errText()).toContain('"no-such-dead-letter"');

      const id = await idOf('evt_3');
      const { code, out } = await run('dead-letters', 'purge', id, '--apply');
      expect(code).toBe(0);
      expect(out[0]).toBe(`Purged 1 dead letter: ${id}.`);
      expect((await listed()).map((d) => d.eventId)).toEqual(['evt_2']);
    });

    it('refuses a queue that does not exist, or lists none where queues are implicit', async () => {
      const io = captureOutput();
      const typo = `${b.queue}-typo`;
      const code = await runCli(['--store', b.store, '--queue', typo, 'dead-letters', 'list'], {
        output: io.output,
        env: b.env,
      });
      if (b.missingMessage) {
        expect(code).toBe(1);
        expect(io.errText()).toContain(b.missingMessage(typo));
      } else {
        expect(code).toBe(0);
        expect(io.text()).toContain('No dead letters');
      }
    });
  });
}
