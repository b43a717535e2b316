import type { Envelope } from '@onceflow/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { replayEvents } from '../src/commands/replay.js';
import { REPLAY_ID_HEADER, REPLAY_OF_HEADER, replayEnvelope } from '@onceflow/core';
import { runCli } from '../src/run.js';
import { createSqliteInboxBrowser } from '../src/targets/sqlite-browser.js';
import { captureOutput, drain, event, open, seed, tempDbPath } from './helpers.js';

let db: string;
const run = (...argv: string[]) => {
  const io = captureOutput();
  return runCli([...argv, '--db', db], { output: io.output }).then((code) => ({ code, ...io }));
};

const at = (minute: number) => `2025-03-01T12:${String(minute).padStart(2, '0')}:00.000Z`;
const window = ['--since', '2025-03-01T12:00:00Z', '--until', '2025-03-01T13:00:00Z'];

/** Messages waiting in the queue: read-only look at the embedded table. */
async function queued(): Promise<number> {
  const embedded = await open(db);
  try {
    const row = embedded.db
      .prepare(
        `SELECT count(*) AS n FROM onceflow_messages WHERE queue = 'events' AND state = 'queued'`,
      )
      .get() as { n: number };
    return row.n;
  } finally {
    await embedded.close();
  }
}

async function consumeAll(n: number): Promise<Envelope[]> {
  return (await drain(db, n)).map((d) => d.envelope);
}

beforeEach(async () => {
  db = tempDbPath();
  await seed(db, {
    completed: [
      event('evt_early', { receivedAt: '2025-03-01T11:59:59.999Z' }),
      event('evt_1', { receivedAt: at(1) }),
      event('evt_2', { receivedAt: at(2), type: 'charge.refunded' }),
      event('evt_3', { receivedAt: at(3), source: 'github', type: 'push' }),
      event('evt_late', { receivedAt: '2025-03-01T13:00:00.000Z' }),
    ],
    enqueued: [event('evt_waiting', { receivedAt: at(4) })],
    received: [event('evt_claimed', { receivedAt: at(5) })],
  });
});

describe('replay', () => {
  it('dry run lists the completed events in the window and publishes nothing', async () => {
    const { code, out, text } = await run('replay', ...window, '--replay-id', 'r1');
    expect(code).toBe(0);
    expect(out[0]).toBe(
      'DRY RUN: would replay 3 completed events received from 2025-03-01T12:00:00.000Z to 2025-03-01T13:00:00.000Z as replay r1. Nothing was published.',
    );
    expect([...text().matchAll(/evt_\w+/g)].map((m) => m[0])).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(out[1]).toBe(
      `Each would be published again to embedded queue "events" as "<id>#replay-r1" with the header x-onceflow-replay-of, so workers process it again.`,
    );
    expect(text()).toContain(
      '2 events in the window not completed (on their way, dead-lettered or discarded), skipped.',
    );
    expect(text()).toContain(
      'Run again with --apply --until 2025-03-01T13:00:00.000Z --replay-id r1 to publish exactly these.',
    );
    expect(await queued()).toBe(0);
  });

  it('filters by source and type; --json names each copy', async () => {
    const bySource = await run(
      'replay',
      ...window,
      '--source',
      'github',
      '--replay-id',
      'r1',
      '--json',
    );
    expect(bySource.json()).toMatchObject({
      dryRun: true,
      count: 1,
      events: [{ id: 'evt_3', source: 'github', replayedAs: 'evt_3#replay-r1' }],
    });
    const limited = await run('replay', ...window, '--limit', '2', '--replay-id', 'r1');
    expect(limited.out[0]).toMatch(/^DRY RUN: would replay 2 completed events /);
    expect(limited.text()).toContain('1 more match beyond --limit.');
    const byType = await run('replay', ...window, '--type', 'charge.refunded', '--json');
    expect((byType.json().events as { id: string }[]).map((e) => e.id)).toEqual(['evt_2']);
  });

  it('--apply publishes copies that pass the record guard on purpose', async () => {
    const { code, out } = await run('replay', ...window, '--replay-id', 'fix-42', '--apply');
    expect(code).toBe(0);
    expect(out[0]).toMatch(
      /^Replayed 3 completed events .* as replay fix-42 to embedded queue "events" in \S+\.$/,
    );
    const copies = await consumeAll(3);
    expect(copies.map((e) => e.id)).toEqual([
      'evt_1#replay-fix-42',
      'evt_2#replay-fix-42',
      'evt_3#replay-fix-42',
    ]);
    expect(copies[0]?.headers[REPLAY_OF_HEADER]).toBe('evt_1');
    expect(copies[0]?.headers[REPLAY_ID_HEADER]).toBe('fix-42');
    expect(Buffer.from(copies[0]!.payload).toString()).toBe('{"id":"evt_1","amount":42}');

    const embedded = await open(db);
    try {
      const begin = { leaseMs: 1000, attempt: 1 };
      const original = await embedded.records.begin(event('evt_1', { receivedAt: at(1) }), begin);
      const copy = await embedded.records.begin(copies[0]!, begin);
      expect(original.status).toBe('processed');
      expect(copy.status).toBe('acquired');
    } finally {
      await embedded.close();
    }
  });

  it('resumes without doubles when run again with the same replay id', async () => {
    await run('replay', ...window, '--replay-id', 'r1', '--limit', '2', '--apply');
    expect(await queued()).toBe(2);
    const again = await run('replay', ...window, '--replay-id', 'r1', '--apply');
    expect(again.code).toBe(0);
    expect(await queued()).toBe(3);
    const other = await run('replay', ...window, '--replay-id', 'r2', '--apply');
    expect(other.code).toBe(0);
    expect(await queued()).toBe(6);
  });

  it('pages through the inbox in small batches without skipping or repeating', async () => {
    const embedded = await open(db);
    try {
      const io = captureOutput();
      const transport = embedded.transport('events');
      const openTransport = async () => ({
        transport,
        destination: 'events',
        close: async () => {},
      });
      const code = await replayEvents(
        { browser: createSqliteInboxBrowser(embedded.db), openTransport },
        { since: new Date(0), replayId: 'all', apply: true, batchSize: 2, json: true },
        io.output,
      );
      expect(code).toBe(0);
      expect(io.json()).toMatchObject({ count: 5, skipped: 2 });
    } finally {
      await embedded.close();
    }
    const ids = (await consumeAll(5)).map((e) => e.id);
    expect(ids).toEqual(
      ['evt_early', 'evt_1', 'evt_2', 'evt_3', 'evt_late'].map((id) => `${id}#replay-all`),
    );
  });

  it('reports a failed publish with the replay id to resume with', async () => {
    const embedded = await open(db);
    try {
      const real = embedded.transport('events');
      let calls = 0;
      const failing = {
        ...real,
        publish: async (messages: Parameters<typeof real.publish>[0]) => {
          if (++calls === 2) throw new Error('broker went away');
          await real.publish(messages);
        },
      };
      const io = captureOutput();
      const openTransport = async () => ({
        transport: failing,
        destination: 'events',
        close: async () => {},
      });
      const code = await replayEvents(
        { browser: createSqliteInboxBrowser(embedded.db), openTransport },
        { since: new Date(0), replayId: 'r9', apply: true, batchSize: 2 },
        io.output,
      );
      expect(code).toBe(1);
      expect(io.errText()).toContain('Replay r9 stopped after 2 events: broker went away');
      expect(io.errText()).toMatch(/Resume with --until \S+ --replay-id r9: /);
    } finally {
      await embedded.close();
    }
  });
});

describe('replay by id', () => {
  it('dry run names exactly the given completed events; --apply publishes their copies', async () => {
    const dry = await run('replay', 'stripe/evt_2', 'github/evt_3', '--replay-id', 'r1');
    expect(dry.code).toBe(0);
    expect(dry.out[0]).toBe(
      'DRY RUN: would replay 2 completed events named by id as replay r1. Nothing was published.',
    );
    expect(dry.text()).toContain('Run again with --apply --replay-id r1 to publish exactly these.');
    expect(await queued()).toBe(0);
    const applied = await run(
      'replay',
      'stripe/evt_2',
      'github/evt_3',
      '--replay-id',
      'r1',
      '--apply',
      '--json',
    );
    expect(applied.json()).toMatchObject({
      action: 'replay',
      dryRun: false,
      count: 2,
      since: null,
    });
    expect((await consumeAll(2)).map((e) => e.id)).toEqual(['evt_2#replay-r1', 'evt_3#replay-r1']);
  });

  it('refuses an id with no record or not completed (exit 3) before publishing any', async () => {
    const { code, out, errText } = await run(
      'replay',
      'stripe/evt_1',
      'stripe/evt_waiting',
      'stripe/evt_404',
      '--apply',
    );
    expect(code).toBe(3);
    expect(out).toEqual([]);
    expect(errText()).toBe(
      'Not replayable: stripe/evt_waiting (enqueued, not completed), stripe/evt_404 (no record). Nothing was published.',
    );
    expect(await queued()).toBe(0);
  });

  it('ids and a window are one or the other', async () => {
    const { code, errText } = await run('replay', 'stripe/evt_1', '--since', '1d');
    expect(code).toBe(2);
    expect(errText()).toContain(
      'replay: give <source>/<id>... or a window (--since), not --since too',
    );
  });
});

describe('replay pacing and progress', () => {
  it('--since takes a duration ago', async () => {
    // The seeded events were received in March 2025, before this test runs.
    const { json } = await run('replay', '--since', '100000d', '--replay-id', 'r1', '--json');
    expect(json()).toMatchObject({ dryRun: true, count: 5, skipped: 2 });
    const none = await run('replay', '--since', '1m', '--json');
    expect(none.json()).toMatchObject({ count: 0 });
  });

  it('the dry run says how long --rate makes it take', async () => {
    const { text } = await run('replay', '--since', '2025-01-01', '--rate', '2/s');
    expect(text()).toContain('At --rate 2/s that takes about 2s.');
  });

  it('--rate paces the publishes; a run over a second prints count, rate and ETA', async () => {
    const started = Date.now();
    const { code, out, err } = await run(
      'replay',
      '--since',
      '2025-01-01',
      '--rate',
      '3',
      '--apply',
    );
    expect(code).toBe(0);
    // Five publishes at 3 a second: the last starts 1.33 s after the first.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1300);
    expect(out[0]).toMatch(/^Replayed 5 completed events /);
    expect(err.length).toBeGreaterThanOrEqual(1);
    for (const line of err) expect(line).toMatch(/^replay: [1-5]\/5 \(\d+%\), [\d.]+\/s, ETA \S+$/);
    expect(err.at(-1)).toMatch(/^replay: 5\/5 \(100%\), /);
    expect(await queued()).toBe(5);
  });

  it('with --json the progress is NDJSON on stderr and the result one document on stdout', async () => {
    const { code, json, err } = await run(
      'replay',
      '--since',
      '2025-01-01',
      '--rate',
      '3',
      '--apply',
      '--json',
    );
    expect(code).toBe(0);
    expect(json()).toMatchObject({ action: 'replay', dryRun: false, count: 5, rate: 3 });
    expect(err.length).toBeGreaterThanOrEqual(1);
    const lines = err.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of lines)
      expect(line).toMatchObject({
        progress: 'replay',
        total: 5,
        ratePerSecond: expect.any(Number),
      });
    expect(lines.at(-1)).toMatchObject({ done: 5, etaMs: 0 });
  });
});

describe('replayEnvelope', () => {
  it('derives the copy from (original id, replay id) only, and never nests', () => {
    const original = event('evt_1');
    const copy = replayEnvelope(original, 'r1');
    expect(replayEnvelope(original, 'r1')).toEqual(copy);
    expect(copy).toMatchObject({
      id: 'evt_1#replay-r1',
      payloadHash: original.payloadHash,
      key: original.key,
    });
    expect(replayEnvelope(copy, 'r2').id).toBe('evt_1#replay-r2');
    expect(() => replayEnvelope(original, 'a b')).toThrow(RangeError);
  });
});
