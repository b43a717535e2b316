import type { EventRecord, RecordStore } from '@onceflow/core';
import { createEmbedded, type Embedded } from '@onceflow/embedded';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { captureOutput, createDbFile, deadLetter, event, testWorker, waitFor } from './helpers.js';

/** One record store as the record and dead-letter commands see it. */
export interface StoreUnderTest {
  /** The `--store` name. */
  readonly store: string;
  /** Flags naming it (`--db …`), besides `--store`. */
  readonly flags: readonly string[];
  /** The environment the CLI reads it from. */
  readonly env: Readonly<Record<string, string>>;
  /** The same store, for seeding and checking. */
  readonly records: RecordStore;
  /**
   * The embedded file copies are published to (`--to embedded`): the store's own for the
   * embedded store, whose `--db` names both. Default: a file of the suite's own.
   */
  readonly db?: string | undefined;
  /** Deletes what the run created. */
  cleanup(): Promise<void>;
}

const STRIPE_SIGNATURE =
  't=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd';

/**
 * The record and dead-letter commands against one real store: listing with filters and paging,
 * show with masked headers, redrive and purge (dry runs change nothing; `--apply` publishes a
 * copy through the embedded transport that a worker then completes, or marks discarded), and
 * `events show` of events a real worker dead-lettered, retried and completed, then redrove.
 * Every test seeds its own source, so the tests share the store without seeing each other.
 */
export function describeRecordCommands(s: StoreUnderTest): void {
  let db: string;
  let embedded: Embedded;
  const run = async (...argv: string[]) => {
    const io = captureOutput();
    const code = await runCli(['--store', s.store, ...s.flags, ...argv], {
      output: io.output,
      env: s.env,
    });
    return { code, ...io };
  };
  /** Flags publishing through the embedded file of this run. */
  const toEmbedded = (queue: string) => ['--to', 'embedded', '--db', db, '--queue', queue];
  const record = async (source: string, id: string): Promise<EventRecord> => {
    const found = await s.records.get(source, id);
    if (!found) throw new Error(`no record of ${source}/${id}`);
    return found;
  };
  const ids = (body: Record<string, unknown>, key = 'deadLetters') =>
    (body[key] as { id: string }[]).map((r) => r.id);

  beforeAll(async () => {
    db = s.db ?? (await createDbFile());
    embedded = createEmbedded({ path: db, pollIntervalMs: 10 });
    await embedded.start();
  });
  afterAll(async () => {
    await embedded.close();
    await s.cleanup();
  });

  describe(`--store ${s.store}: listing and showing`, () => {
    const source = 'list';
    beforeAll(async () => {
      await deadLetter(s.records, [
        event('evt_1', { source }),
        event('evt_2', { source, type: 'charge.refunded' }),
      ]);
      await deadLetter(s.records, [event('evt_3', { source })], 'attempts exhausted');
    });

    it('dead-letters list: oldest first with reason and total; pages with --cursor', async () => {
      const all = await run('dead-letters', 'list', '--source', source);
      expect(all.code).toBe(0);
      expect(all.out[0]).toMatch(/^UPDATED AT\s+SOURCE\s+ID\s+TYPE\s+ATTEMPTS\s+REASON$/);
      expect(all.out.slice(1, 4).map((l) => l.match(/evt_\d/)?.[0])).toEqual([
        'evt_1',
        'evt_2',
        'evt_3',
      ]);
      expect(all.out[1]).toContain('schema: amount must be a string');
      expect(all.out.at(-1)).toBe('3 dead letters match; showing the oldest 3.');

      const first = await run('dead-letters', 'list', '--source', source, '--limit', '2');
      const next = first.text().match(/^Next page: --cursor (\S+)$/m)?.[1];
      expect(next).toBeDefined();
      const rest = await run(
        'dead-letters',
        'list',
        '--source',
        source,
        '--cursor',
        next!,
        '--json',
      );
      expect(rest.json()).toMatchObject({ total: 3, next: null });
      expect(ids(rest.json())).toEqual(['evt_3']);
    });

    it('filters by type, reason and age', async () => {
      const json = async (...flags: string[]) =>
        ids((await run('dead-letters', 'list', '--source', source, ...flags, '--json')).json());
      expect(await json('--type', 'charge.refunded')).toEqual(['evt_2']);
      expect(await json('--reason', 'exhausted')).toEqual(['evt_3']);
      expect(await json('--older-than', '1h')).toEqual([]);
      expect(await json('--newer-than', '1h')).toEqual(['evt_1', 'evt_2', 'evt_3']);
      const events = await run('events', 'list', '--source', source, '--state', 'completed');
      expect(events.out).toEqual(['No records.']);
    });

    it('dead-letters show: record, history, masked secret headers, payload', async () => {
      const source = 'show';
      const headers = {
        'stripe-signature': STRIPE_SIGNATURE,
        authorization: 'Bearer sk_live_123',
        'x-hub-signature-256': 'sha256=abc',
        'content-type': 'application/json',
      };
      await deadLetter(s.records, [event('evt_1', { source, headers })]);
      const { code, text } = await run('dead-letters', 'show', source, 'evt_1');
      expect(code).toBe(0);
      expect(text()).toMatch(/^state:\s+dead-lettered$/m);
      expect(text()).toMatch(/^last error:\s+SCHEMA SchemaError: amount must be a string$/m);
      expect(text()).toMatch(/^\S+Z\s+dead-lettered\s+3\s+SCHEMA\s+worker-1/m);
      expect(text()).toContain('  stripe-signature: [redacted]');
      expect(text()).toContain('  authorization: [redacted]');
      expect(text()).toContain('  x-hub-signature-256: [redacted]');
      expect(text()).toContain('  content-type: application/json');
      expect(text()).toContain('{"id":"evt_1","amount":42}');
      expect(text()).not.toContain('sk_live_123');
      expect(text()).not.toContain(STRIPE_SIGNATURE);

      const json = await run('dead-letters', 'show', `${source}/evt_1`, '--json');
      const envelope = json.json().envelope as { headers: Record<string, string>; payload: string };
      expect(envelope.headers.authorization).toBe('[redacted]');
      expect(envelope.payload).toBe('{"id":"evt_1","amount":42}');
      expect(JSON.stringify(json.json())).not.toContain('sk_live_123');
    });

    it('show exits 3 for no record, and for a record that is not a dead letter', async () => {
      const none = await run('dead-letters', 'show', source, 'evt_404');
      expect([none.code, none.errText()]).toEqual([3, 'No record of list/evt_404.']);
      const events = await run('events', 'show', source, 'evt_404', '--json');
      expect([events.code, events.out]).toEqual([3, []]);
      const done = event('evt_done', { source: 'show-done' });
      const begun = await s.records.begin(done, { leaseMs: 10_000, attempt: 1 });
      if (begun.status !== 'acquired') throw new Error(begun.status);
      await s.records.complete(done.source, done.id, begun.token);
      const other = await run('dead-letters', 'show', 'show-done', 'evt_done');
      expect(other.code).toBe(3);
      expect(other.errText()).toContain('is not a dead letter (it is completed)');
    });
  });

  describe(`--store ${s.store}: redrive and purge`, () => {
    it('dry runs say what would happen, with counts, and change nothing', async () => {
      const source = 'dry';
      await deadLetter(
        s.records,
        [1, 2, 3].map((n) => event(`evt_${n}`, { source })),
      );
      const before = await s.records.count({ source, state: 'dead-lettered' });
      const redrive = await run(
        'dead-letters',
        'redrive',
        '--source',
        source,
        '--actor',
        'cli:ann',
      );
      expect(redrive.code).toBe(0);
      expect(redrive.out[0]).toBe('DRY RUN: would redrive 3 dead letters. Nothing was changed.');
      expect(redrive.out[1]).toContain('recorded as redriven by cli:ann');
      expect(redrive.text()).toMatch(/^\S+Z\s+dry\s+evt_1\s/m);
      expect(redrive.out.at(-1)).toBe('Run again with --apply to do it.');

      const limited = await run('dead-letters', 'redrive', '--all', '--limit', '2', '--json');
      expect(limited.json()).toMatchObject({ action: 'redrive', dryRun: true, count: 2 });

      const purge = await run('dead-letters', 'purge', `${source}/evt_2`, '--json');
      expect(purge.json()).toMatchObject({
        action: 'purge',
        dryRun: true,
        count: 1,
        deadLetters: [{ source, id: 'evt_2', attempts: 3 }],
      });
      expect(await s.records.count({ source, state: 'dead-lettered' })).toBe(before);
      expect((await record(source, 'evt_2')).history.map((h) => h.state)).toEqual([
        'dead-lettered',
      ]);
    });

    it('refuses ids that are not dead letters (exit 3) before touching any', async () => {
      const source = 'refuse';
      await deadLetter(s.records, [event('evt_1', { source })]);
      const { code, errText } = await run(
        'dead-letters',
        'purge',
        `${source}/evt_1`,
        `${source}/evt_404`,
        '--apply',
      );
      expect(code).toBe(3);
      expect(errText()).toBe('Not dead letters: refuse/evt_404 (no record). Nothing was changed.');
      expect((await record(source, 'evt_1')).state).toBe('dead-lettered');
    });

    it('purge --apply marks the chosen ones discarded, with the actor in their history', async () => {
      const source = 'purge';
      await deadLetter(
        s.records,
        [1, 2].map((n) => event(`evt_${n}`, { source })),
      );
      const { code, out } = await run(
        'dead-letters',
        'purge',
        `${source}/evt_2`,
        '--apply',
        '--actor',
        'cli:bob',
      );
      expect(code).toBe(0);
      expect(out[0]).toBe(
        'Purged 1 dead letter as cli:bob: marked discarded, kept for dedupe and audit until retention.',
      );
      const purged = await record(source, 'evt_2');
      expect(purged.state).toBe('discarded');
      expect(purged.history.at(-1)).toMatchObject({ state: 'discarded', actor: 'cli:bob' });
      expect((await record(source, 'evt_1')).state).toBe('dead-lettered');
    });

    it('redrive --apply publishes a copy that a worker completes; the history says who', async () => {
      const source = 'redrive';
      const queue = `redrive-${s.store}`;
      await deadLetter(s.records, [event('evt_1', { source }), event('evt_2', { source })]);
      const { code, out } = await run(
        'dead-letters',
        'redrive',
        '--source',
        source,
        '--limit',
        '1',
        '--actor',
        'cli:carol',
        ...toEmbedded(queue),
        '--apply',
      );
      expect(code).toBe(0);
      expect(out[0]).toBe(
        `Redrove 1 dead letter to embedded queue "${queue}" in ${db} as cli:carol.`,
      );
      expect((await record(source, 'evt_1')).state).toBe('enqueued');
      expect((await record(source, 'evt_2')).state).toBe('dead-lettered');

      const worker = testWorker(embedded.transport(queue), s.records);
      await worker.start();
      try {
        await waitFor(
          async () => (await record(source, 'evt_1')).state === 'completed',
          'completed',
        );
      } finally {
        await worker.close();
      }
      const history = (await record(source, 'evt_1')).history;
      expect(history.map((h) => h.state)).toEqual([
        'dead-lettered',
        'enqueued',
        'processing',
        'completed',
      ]);
      expect(history[1]).toMatchObject({ actor: 'cli:carol', note: 'redriven' });
      expect(history[2]).toMatchObject({ attempt: 1, actor: 'worker-1' });
    });
  });

  describe(`--store ${s.store}: a transition refused for review`, () => {
    const source = 'review';
    it('a ReviewError is dead-lettered at once; dead-letters list --reason review finds it', async () => {
      const transport = embedded.transport(`review-${s.store}`);
      const worker = testWorker(transport, s.records);
      await worker.start();
      try {
        await transport.publish(
          ['evt_ok', 'evt_review'].map((id) => ({ envelope: event(id, { source }) })),
        );
        await waitFor(
          async () => (await s.records.count({ source, state: 'dead-lettered' })) === 1,
          'the review dead letter',
          10_000,
        );
      } finally {
        await worker.close();
      }
      const listed = await run('dead-letters', 'list', '--reason', 'review', '--json');
      expect(ids(listed.json()).filter((id) => id.startsWith('evt_'))).toContain('evt_review');
      const mine = await run('dead-letters', 'list', '--source', source, '--reason', 'review');
      expect(mine.out[1]).toMatch(/evt_review.*review: approved → pending not allowed$/);
      expect(mine.out.at(-1)).toBe('1 dead letter matches; showing the oldest 1.');
      expect(await record(source, 'evt_review')).toMatchObject({
        attempts: 1,
        lastError: { code: 'REVIEW', name: 'ReviewError' },
      });
    }, 20_000);
  });

  describe(`--store ${s.store}: events show after a real worker`, () => {
    const source = 'worker';
    const queue = `worker-${s.store}`;
    const show = async (id: string) => {
      const { code, out, json } = await run('events', 'show', source, id, '--json');
      expect(code, out.join('\n')).toBe(0);
      return json() as unknown as EventRecord;
    };
    const timeline = (r: EventRecord) =>
      r.history.map((h) => [h.state, h.attempt, h.code, h.actor, h.note]);

    beforeAll(async () => {
      const transport = embedded.transport(queue);
      const worker = testWorker(transport, s.records);
      await worker.start();
      try {
        await transport.publish(
          ['evt_ok', 'evt_twice', 'evt_poison'].map((id) => ({ envelope: event(id, { source }) })),
        );
        const settled = async () =>
          (await s.records.count({ source, state: 'completed' })) === 2 &&
          (await s.records.count({ source, state: 'dead-lettered' })) === 1;
        await waitFor(settled, 'two completed, one dead letter', 10_000);
      } finally {
        await worker.close();
      }
    }, 20_000);

    it('a twice-delivered event: a failed attempt, its retry, then completed', async () => {
      const r = await show('evt_twice');
      expect(r).toMatchObject({ state: 'completed', attempts: 2, consumer: 'worker-1' });
      expect(timeline(r)).toEqual([
        ['processing', 1, undefined, 'worker-1', undefined],
        ['retry-scheduled', 1, 'INTERNAL', 'worker-1', undefined],
        ['processing', 2, undefined, 'worker-1', undefined],
        ['completed', 2, undefined, 'worker-1', undefined],
      ]);
      const { out } = await run('events', 'show', source, 'evt_twice');
      expect(out).toContain('History (oldest first, 4 entries):');
      expect(out.find((l) => l.includes('retry-scheduled'))).toMatch(
        /^\S+Z\s+retry-scheduled\s+1\s+INTERNAL\s+worker-1\s+-$/,
      );
    });

    it('a dead-lettered event, then the same event redriven and completed', async () => {
      const dead = await show('evt_poison');
      expect(dead).toMatchObject({ state: 'dead-lettered', attempts: 1 });
      expect(dead.lastError?.code).toBe('NON_RETRYABLE');
      expect(timeline(dead).map((t) => t.slice(0, 3))).toEqual([
        ['processing', 1, undefined],
        ['dead-lettered', 1, 'NON_RETRYABLE'],
      ]);
      const { text } = await run('events', 'show', source, 'evt_poison');
      expect(text()).toMatch(
        /^last error:\s+NON_RETRYABLE NonRetryableError: amount must be a string$/m,
      );

      const redrive = await run(
        'dead-letters',
        'redrive',
        `${source}/evt_poison`,
        '--actor',
        'cli:dave',
        ...toEmbedded(queue),
        '--apply',
        '--json',
      );
      expect(redrive.json()).toMatchObject({ action: 'redrive', dryRun: false, count: 1 });
      const worker = testWorker(embedded.transport(queue), s.records);
      await worker.start();
      try {
        await waitFor(async () => (await show('evt_poison')).state === 'completed', 'redriven');
      } finally {
        await worker.close();
      }
      const redriven = await show('evt_poison');
      expect(timeline(redriven).map((t) => t.slice(0, 2).concat(t.slice(3)))).toEqual([
        ['processing', 1, 'worker-1', undefined],
        ['dead-lettered', 1, 'worker-1', undefined],
        ['enqueued', undefined, 'cli:dave', 'redriven'],
        ['processing', 1, 'worker-1', undefined],
        ['completed', 1, 'worker-1', undefined],
      ]);
    });

    it('events list filters the worker-made records by state', async () => {
      const { json } = await run(
        'events',
        'list',
        '--source',
        source,
        '--state',
        'completed',
        '--json',
      );
      // evt_poison too, once the test before redrove it.
      expect(ids(json(), 'records')).toEqual(expect.arrayContaining(['evt_ok', 'evt_twice']));
      const dead = await run('events', 'list', '--source', source, '--state', 'discarded');
      expect(dead.out).toEqual(['No records.']);
    });
  });
}
