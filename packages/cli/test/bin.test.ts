import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { createEmbedded } from '@onceflow/embedded';
import { captureOutput, createDbFile, deadLetter, event } from './helpers.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = fileURLToPath(new URL('../src/bin.ts', import.meta.url));

/** Runs the CLI from source as its own process, as `onceflow …` would run. */
function onceflow(argv: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=@onceflow/source', '--import', 'tsx', bin, ...argv],
      { cwd: root, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let db: string;
beforeAll(async () => {
  db = await createDbFile();
  const embedded = createEmbedded({ path: db });
  await deadLetter(embedded.records, [event('evt_1'), event('evt_2')]);
  await embedded.close();
});

describe('the onceflow binary', () => {
  it('prints JSON on stdout and exits 0; a command-line error exits 2, no record 3', async () => {
    const [list, usage, missing] = await Promise.all([
      onceflow(['dead-letters', 'list', '--json', '--db', db]),
      onceflow(['dead-letters', 'redrive', '--db', db]),
      onceflow(['events', 'show', 'stripe', 'evt_404', '--db', db]),
    ]);
    expect(list.code).toBe(0);
    expect(list.stderr).toBe('');
    expect(JSON.parse(list.stdout)).toMatchObject({ total: 2 });
    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe('');
    expect(usage.stderr).toContain('give <source>/<id>..., filters (--source, …) or --all');
    expect(missing).toEqual({ code: 3, stdout: '', stderr: 'No record of stripe/evt_404.\n' });
  });

  it('--version and every --help print on stdout and exit 0', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    // One process each costs a second or more; usage.test.ts runs every topic in-process.
    const topics = [[], ['dead-letters'], ['replay'], ['events', 'show']];
    const [version, ...helps] = await Promise.all([
      onceflow(['--version']),
      ...topics.map((topic) => onceflow([...topic, '--help'])),
    ]);
    expect(version).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    topics.forEach((topic, i) => {
      const help = helps[i];
      expect(help?.code, topic.join(' ')).toBe(0);
      expect(help?.stderr).toBe('');
      expect(help?.stdout).toContain(`onceflow ${topic.join(' ')}`.trim());
      const group = topic.length === 1 && topic[0] !== 'replay';
      expect(help?.stdout).toContain(group ? 'Commands:' : 'Exit codes:');
    });
  });

  it('redrives with --apply, reading the database from ONCEFLOW_DB', async () => {
    const result = await onceflow(['dead-letters', 'redrive', '--all', '--apply'], {
      ONCEFLOW_DB: db,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `Redrove 2 dead letters to embedded queue "events" in ${db} as cli:${userInfo().username}.\n`,
    );
    const io = captureOutput();
    expect(await runCli(['dead-letters', 'list', '--db', db], { output: io.output })).toBe(0);
    expect(io.out).toEqual(['No dead letters.']);
  });
});
