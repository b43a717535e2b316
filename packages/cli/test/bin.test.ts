import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { createEmbedded } from '@onceflow/embedded';
import { captureOutput, createDbFile, deadLetter, event, expectOnlyProgress } from './helpers.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
// Resolved here, so the binary finds tsx from any working directory.
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * Runs the CLI from source as its own process, as `onceflow …` would run (under tsx, so a
 * TypeScript config file loads), with no colour settings of its own: its stdout is a pipe.
 */
function onceflow(argv: string[], env: Record<string, string> = {}, cwd = root) {
  const { FORCE_COLOR: _, NO_COLOR: __, ...inherited } = process.env;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=@onceflow/source', '--import', tsx, bin, ...argv],
      { cwd, env: { ...inherited, ...env } },
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

  it('reads onceflow.config.ts in its working directory; FORCE_COLOR colours a pipe', async () => {
    const own = await createDbFile();
    const embedded = createEmbedded({ path: own });
    await deadLetter(embedded.records, [event('evt_1')]);
    await embedded.close();
    const dir = dirname(own);
    const config = `import type { OnceflowConfig } from '${fileURLToPath(new URL('../src/index.ts', import.meta.url))}';
const config: OnceflowConfig = { embedded: { db: 'onceflow.db' }, defaults: { actor: 'cli:ts' } };
export default config;
`;
    writeFileSync(join(dir, 'onceflow.config.ts'), config);
    const [plain, coloured] = await Promise.all([
      onceflow(['dead-letters', 'purge', '--all'], {}, dir),
      onceflow(['dead-letters', 'purge', '--all'], { FORCE_COLOR: '1' }, dir),
    ]);
    expect(plain.stderr).toBe('');
    expect(plain.stdout).toMatch(
      /^DRY RUN: would purge 1 dead letter\. Nothing was changed\.\nEach would be marked discarded by cli:ts: /,
    );
    expect(
      coloured.stdout.startsWith('\u001b[33mDRY RUN:\u001b[39m would purge 1 dead letter.'),
    ).toBe(true);
  });

  it('redrives with --apply, reading the database from ONCEFLOW_DB', async () => {
    const result = await onceflow(['dead-letters', 'redrive', '--all', '--apply'], {
      ONCEFLOW_DB: db,
    });
    // Timed from here, the run would include the process's start-up: whether the redrive itself
    // took over a second (a disk sync can hold up its writes) is not known, so stderr may hold
    // progress lines, and nothing else.
    expectOnlyProgress(result.stderr.split('\n').filter(Boolean), 'redrive');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `Redrove 2 dead letters to embedded queue "events" in ${db} as cli:${userInfo().username}.\n`,
    );
    const io = captureOutput();
    expect(await runCli(['dead-letters', 'list', '--db', db], { output: io.output })).toBe(0);
    expect(io.out).toEqual(['No dead letters.']);
  });
});
