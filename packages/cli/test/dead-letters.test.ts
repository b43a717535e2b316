import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { captureOutput, drain, event, seed, tempDbPath } from './helpers.js';

let db: string;
const run = (...argv: string[]) => {
  const io = captureOutput();
  return runCli([...argv, '--db', db], { output: io.output }).then((code) => ({ code, ...io }));
};

/** Ids of the dead letters in the file, oldest first. */
async function deadLetterIds(): Promise<string[]> {
  const { code, json } = await run('dead-letters', 'list', '--json');
  expect(code).toBe(0);
  return (json().deadLetters as { id: string }[]).map((d) => d.id);
}

beforeEach(async () => {
  db = tempDbPath();
  await seed(db, { deadLettered: [event('evt_1'), event('evt_2'), event('evt_3')] });
});

describe('dead-letters list and show', () => {
  it('lists dead letters oldest first with reason and total', async () => {
    const { code, out } = await run('dead-letters', 'list');
    expect(code).toBe(0);
    expect(out[0]).toMatch(
      /^ID\s+DEAD-LETTERED AT\s+SOURCE\s+TYPE\s+EVENT ID\s+ATTEMPTS\s+REASON$/,
    );
    expect(out.slice(1, 4).map((l) => l.match(/evt_\d/)?.[0])).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(out[1]).toContain('schema: amount must be a string');
    expect(out.at(-1)).toBe('3 dead letters in total, showing the oldest 3.');
  });

  it('honours --limit and reports the full depth in --json', async () => {
    const { code, json } = await run('dead-letters', 'list', '--limit', '2', '--json');
    expect(code).toBe(0);
    const body = json() as { total: number; deadLetters: { eventId: string; attempts: number }[] };
    expect(body.total).toBe(3);
    expect(body.deadLetters.map((d) => d.eventId)).toEqual(['evt_1', 'evt_2']);
    expect(body.deadLetters[0]?.attempts).toBe(1);
  });

  it('shows one dead letter in full, payload included', async () => {
    const [id] = await deadLetterIds();
    const { code, text } = await run('dead-letters', 'show', id!);
    expect(code).toBe(0);
    expect(text()).toContain('event id:');
    expect(text()).toContain('last error:        SCHEMA SchemaError: amount must be a string');
    expect(text()).toContain('{"id":"evt_1","amount":42}');
    const json = await run('dead-letters', 'show', id!, '--json');
    expect((json.json().envelope as { payload: string }).payload).toBe(
      '{"id":"evt_1","amount":42}',
    );
  });

  it('fails with 1 for an unknown id', async () => {
    const { code, errText } = await run('dead-letters', 'show', '999');
    expect(code).toBe(1);
    expect(errText()).toContain('No dead letter with id "999"');
  });
});

describe('dead-letters redrive', () => {
  it('is a dry run by default: prints count and ids, changes nothing', async () => {
    const ids = await deadLetterIds();
    const { code, out, text } = await run('dead-letters', 'redrive', '--all');
    expect(code).toBe(0);
    expect(out[0]).toBe('DRY RUN: would redrive 3 dead letters. Nothing was changed.');
    for (const id of ids) expect(text()).toMatch(new RegExp(`^${id}\\s`, 'm'));
    expect(await deadLetterIds()).toEqual(ids);

    const json = await run('dead-letters', 'redrive', ids[0]!, '--json');
    expect(json.json()).toEqual({ action: 'redrive', dryRun: true, count: 1, ids: [ids[0]] });
    expect(await deadLetterIds()).toEqual(ids);
  });

  it('with --apply moves the chosen ones back to the queue, attempts starting at 1', async () => {
    const ids = await deadLetterIds();
    const { code, out } = await run('dead-letters', 'redrive', ids[0]!, ids[2]!, '--apply');
    expect(code).toBe(0);
    expect(out[0]).toBe(`Redrove 2 dead letters: ${ids[0]}, ${ids[2]}.`);
    expect(await deadLetterIds()).toEqual([ids[1]]);
    const back = await drain(db, 2);
    expect(back.map((d) => [d.envelope.id, d.attempt])).toEqual([
      ['evt_1', 1],
      ['evt_3', 1],
    ]);
  });

  it('--all --apply redrives every one', async () => {
    const { code, json } = await run('dead-letters', 'redrive', '--all', '--apply', '--json');
    expect(code).toBe(0);
    expect(json()).toMatchObject({ action: 'redrive', dryRun: false, count: 3 });
    expect(await deadLetterIds()).toEqual([]);
    expect((await drain(db, 3)).map((d) => d.envelope.id).sort()).toEqual([
      'evt_1',
      'evt_2',
      'evt_3',
    ]);
  });

  it('refuses unknown ids before touching anything, even with --apply', async () => {
    const ids = await deadLetterIds();
    const { code, errText } = await run('dead-letters', 'redrive', ids[0]!, '12345', '--apply');
    expect(code).toBe(1);
    expect(errText()).toContain('"12345"');
    expect(await deadLetterIds()).toEqual(ids);
  });
});

describe('dead-letters purge', () => {
  it('is a dry run by default', async () => {
    const ids = await deadLetterIds();
    const { code, out } = await run('dead-letters', 'purge', '--all');
    expect(code).toBe(0);
    expect(out[0]).toBe('DRY RUN: would purge 3 dead letters. Nothing was changed.');
    expect(await deadLetterIds()).toEqual(ids);
  });

  it('with --apply deletes exactly the chosen ones', async () => {
    const ids = await deadLetterIds();
    const { code, out } = await run('dead-letters', 'purge', ids[1]!, '--apply');
    expect(code).toBe(0);
    expect(out[0]).toBe(`Purged 1 dead letter: ${ids[1]}.`);
    expect(await deadLetterIds()).toEqual([ids[0], ids[2]]);
    await run('dead-letters', 'purge', '--all', '--apply');
    const { out: empty } = await run('dead-letters', 'list');
    expect(empty).toEqual(['No dead letters.']);
  });
});
