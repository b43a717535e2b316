import { describe, expect, it } from 'vitest';
import { colorFor } from '../src/color.js';
import { streamOutput } from '../src/output.js';
import { runCli } from '../src/run.js';
import { createDbFile, deadLetter, event, open } from './helpers.js';

const tty = { isTTY: true };
const pipe = { isTTY: false };
const ESC = '\u001b[';

describe('colour only on a terminal', () => {
  it('colorFor: a TTY yes, a pipe no; NO_COLOR off, FORCE_COLOR wins, TERM=dumb off', () => {
    expect(colorFor(tty, {})).toBe(true);
    expect(colorFor(pipe, {})).toBe(false);
    expect(colorFor({}, {})).toBe(false);
    expect(colorFor(tty, { NO_COLOR: '1' })).toBe(false);
    expect(colorFor(tty, { NO_COLOR: '' })).toBe(true);
    expect(colorFor(tty, { TERM: 'dumb' })).toBe(false);
    expect(colorFor(pipe, { FORCE_COLOR: '1' })).toBe(true);
    expect(colorFor(pipe, { FORCE_COLOR: '' })).toBe(true);
    expect(colorFor(tty, { FORCE_COLOR: '0' })).toBe(false);
    expect(colorFor(tty, { FORCE_COLOR: 'false' })).toBe(false);
    expect(colorFor(pipe, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(true);
  });

  it('a dry run on a TTY is coloured, the same piped is plain, and --json never is', async () => {
    const db = await createDbFile();
    const embedded = await open(db);
    try {
      await deadLetter(embedded.records, [event('evt_1')]);
    } finally {
      await embedded.close();
    }
    const capture = (stream: { isTTY: boolean }, env: Record<string, string> = {}) => {
      let text = '';
      const s = { ...stream, write: (chunk: string) => (text += chunk) };
      return { output: streamOutput(s, s, env), text: () => text };
    };
    const argv = ['dead-letters', 'redrive', '--all', '--db', db];
    const onTty = capture(tty);
    expect(await runCli(argv, { output: onTty.output })).toBe(0);
    expect(onTty.text()).toContain(`${ESC}33mDRY RUN:${ESC}39m would redrive 1 dead letter.`);
    const piped = capture(pipe);
    await runCli(argv, { output: piped.output });
    expect(piped.text()).toMatch(/^DRY RUN: would redrive 1 dead letter\./);
    expect(piped.text()).not.toContain(ESC);
    const noColor = capture(tty, { NO_COLOR: '1' });
    await runCli(argv, { output: noColor.output });
    expect(noColor.text()).not.toContain(ESC);
    const json = capture(tty);
    await runCli([...argv, '--json'], { output: json.output });
    expect(json.text()).not.toContain(ESC);
    expect(JSON.parse(json.text())).toMatchObject({ dryRun: true, count: 1 });
    const refused = capture(tty);
    expect(await runCli(['events', 'list', '--state', 'done'], { output: refused.output })).toBe(2);
    expect(refused.text()).toContain(`${ESC}31monceflow: --state: "done" is not a state`);
  });
});
