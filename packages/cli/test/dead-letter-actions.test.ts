import { createEmbedded, type Embedded } from '@onceflow/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import type { TransportRegistry } from '../src/target.js';
import { defaultTransports } from '../src/targets.js';
import {
  captureOutput,
  createDbFile,
  deadLetter,
  drain,
  event,
  PROGRESS_INTERVAL_MS,
} from './helpers.js';

let db: string;
let embedded: Embedded;
const run = async (argv: string[], transports?: TransportRegistry) => {
  const io = captureOutput();
  const code = await runCli([...argv, '--db', db], { output: io.output, transports });
  return { code, ...io };
};
const states = async () =>
  (await embedded.records.list({ limit: 100 })).records.map((r) => `${r.id}:${r.state}`).sort();

/** A fresh file holding six dead letters, evt_1 to evt_6. */
async function seed() {
  db = await createDbFile();
  embedded = createEmbedded({ path: db });
  await deadLetter(
    embedded.records,
    [1, 2, 3, 4, 5, 6].map((n) => event(`evt_${n}`)),
  );
}

beforeEach(seed);
afterEach(() => embedded.close());

describe('dead-letter actions on the embedded store', () => {
  it('--rate paces a run; a run over a second reports count, rate and ETA on stderr', async () => {
    const started = Date.now();
    const { code, out, err } = await run([
      'dead-letters',
      'purge',
      '--all',
      '--rate',
      '4/s',
      '--actor',
      'cli:ops',
      '--apply',
    ]);
    const took = Date.now() - started;
    expect(code).toBe(0);
    expect(out[0]).toMatch(/^Purged 6 dead letters as cli:ops: /);
    // Six steps at 4 a second: the last starts 1.25 s after the first.
    expect(took).toBeGreaterThanOrEqual(1200);
    expect(err.length).toBeGreaterThanOrEqual(2);
    for (const line of err) expect(line).toMatch(/^purge: [1-6]\/6 \(\d+%\), [\d.]+\/s, ETA \S+/);
    expect(err.at(-1)).toMatch(/^purge: 6\/6 \(100%\), /);
    expect(await embedded.records.count({ state: 'discarded' })).toBe(6);
  });

  it('--json: a short run prints no progress; --all --apply redrives every one, published in order', async () => {
    // Progress lines begin a second into a run, so only a run shorter than that shows that a short
    // run prints none. One that a disk sync held up longer (each redrive writes to the file) is
    // run again, on a fresh file.
    for (let tries = 1; ; tries++) {
      if (tries > 1) {
        await embedded.close();
        await seed();
      }
      const started = Date.now();
      const { code, json, err } = await run([
        'dead-letters',
        'redrive',
        '--all',
        '--apply',
        '--json',
        '--actor',
        'cli:ops',
      ]);
      const took = Date.now() - started;
      if (took >= PROGRESS_INTERVAL_MS && tries < 5) continue;
      expect(took, 'a run shorter than the progress interval').toBeLessThan(PROGRESS_INTERVAL_MS);
      expect(code).toBe(0);
      expect(err).toEqual([]);
      expect(json()).toEqual({
        action: 'redrive',
        dryRun: false,
        actor: 'cli:ops',
        to: `embedded queue "events" in ${db}`,
        rate: null,
        count: 6,
        skipped: [],
      });
      const copies = await drain(db, 6);
      expect(
        copies.map((d) => [d.envelope.id, d.attempt, d.envelope.headers['x-onceflow-redrive']]),
      ).toEqual([1, 2, 3, 4, 5, 6].map((n) => [`evt_${n}`, 1, 'cli:ops']));
      return;
    }
  });

  it('--json with --rate: progress as NDJSON on stderr, the result one document on stdout', async () => {
    const { code, json, err } = await run([
      'dead-letters',
      'purge',
      '--all',
      '--rate',
      '4/s',
      '--apply',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(json()).toMatchObject({ action: 'purge', dryRun: false, rate: 4, count: 6 });
    expect(err.length).toBeGreaterThanOrEqual(1);
    const lines = err.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of lines) expect(line).toMatchObject({ progress: 'purge', total: 6 });
    expect(lines.at(-1)).toMatchObject({ done: 6, etaMs: 0 });
  });

  it('a dry run lists the first 20 and counts the rest; --limit says how many more match', async () => {
    await deadLetter(
      embedded.records,
      Array.from({ length: 20 }, (_, i) => event(`evt_x${i}`)),
    );
    const { out } = await run(['dead-letters', 'redrive', '--all']);
    expect(out[0]).toBe('DRY RUN: would redrive 26 dead letters. Nothing was changed.');
    expect(out).toContain('… and 6 more.');
    const limited = await run(['dead-letters', 'purge', '--source', 'stripe', '--limit', '5']);
    expect(limited.out[0]).toBe('DRY RUN: would purge 5 dead letters. Nothing was changed.');
    expect(limited.out).toContain('21 more match beyond --limit.');
    expect(await embedded.records.count({ state: 'dead-lettered' })).toBe(26);
  });

  it('a publish failing part-way stops with exit 1, saying how far it got; running again goes on', async () => {
    let calls = 0;
    const failing: TransportRegistry = {
      embedded: async (options) => {
        const target = await defaultTransports.embedded!(options);
        const { transport } = target;
        const publish: typeof transport.publish = async (messages) => {
          if (++calls === 3) throw new Error('broker went away');
          await transport.publish(messages);
        };
        return { ...target, transport: { ...transport, publish } };
      },
    };
    const first = await run(['dead-letters', 'redrive', '--all', '--apply'], failing);
    expect(first.code).toBe(1);
    expect(first.errText()).toBe(
      'Redrive stopped after 2 of 6 dead letters: broker went away\nThose done are no longer dead letters: run the same command again to go on with the rest.',
    );
    expect(await embedded.records.count({ state: 'dead-lettered' })).toBe(4);
    const again = await run(['dead-letters', 'redrive', '--all', '--apply']);
    expect(again.out[0]).toMatch(/^Redrove 4 dead letters /);
    expect(await states()).toEqual([1, 2, 3, 4, 5, 6].map((n) => `evt_${n}:enqueued`));
  });
});
