import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMAND_FLAGS, type CommandName, DEFAULT_DB, parseCommandLine } from '../src/args.js';
import { commandHelp } from '../src/command-help.js';
import { parseDuration, parseInstant } from '../src/duration.js';
import { runCli } from '../src/run.js';
import type { TargetRegistry } from '../src/target.js';
import { defaultTargets } from '../src/targets.js';
import { USAGE } from '../src/usage.js';
import { CommandLineError } from '../src/command-line-error.js';
import { captureOutput, tempDbPath } from './helpers.js';

const run = async (argv: string[], env: Record<string, string> = {}, targets?: TargetRegistry) => {
  const io = captureOutput();
  const code = await runCli(argv, { output: io.output, env, targets });
  return { code, ...io };
};

describe('command-line errors exit with 2 and touch nothing', () => {
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['dead-letters'], /"dead-letters" needs a subcommand/],
    [['dead-letters', 'resend'], /unknown command "dead-letters resend"/],
    [['dead-letters', 'redrive'], /give the ids to act on, or --all/],
    [['dead-letters', 'purge', '7', '--all'], /give ids or --all, not both/],
    [['dead-letters', 'redrive', '--all', '--aply'], /Unknown option '--aply'/],
    [['dead-letters', 'redrive', '--all', '--limit', '3'], /redrive does not take --limit/],
    [['dead-letters', 'show'], /give the id of a dead letter/],
    [['dead-letters', 'list', '--limit', '0'], /--limit: expected a positive integer/],
    [['dead-letters', 'list', 'extra'], /unexpected argument "extra"/],
    [['replay'], /--since is required/],
    [['replay', '--since', 'yesterday'], /--since: "yesterday" is not an ISO-8601 date/],
    [['replay', '--since', '2025-03-02', '--until', '2025-03-01'], /--until must be after --since/],
    [['replay', '--since', '2025-03-01', '--replay-id', 'has space'], /--replay-id/],
    [['inbox', 'purge'], /--older-than is required/],
    [['inbox', 'purge', '--older-than', '30 days'], /not a duration/],
    [['inbox', 'stats', '--apply'], /inbox stats does not take --apply/],
  ];
  for (const [argv, message] of cases) {
    it(argv.join(' ') || '(nothing)', async () => {
      const { code, out, errText } = await run(argv);
      expect(code).toBe(2);
      expect(errText()).toMatch(message);
      expect(errText()).toContain('onceflow --help');
      expect(out).toEqual([]);
    });
  }

  it('prints the usage when no command is given', async () => {
    const { code, errText } = await run([]);
    expect(code).toBe(2);
    expect(errText()).toContain('DRY RUN unless --apply');
  });

  it('names the known stores for an unknown --store', async () => {
    const { code, errText } = await run(['inbox', 'stats', '--store', 'nats']);
    expect(code).toBe(2);
    expect(errText()).toContain(
      'unknown store "nats" (known: embedded, rabbitmq, bullmq, kafka, sqs, postgres)',
    );
  });

  it('refuses a command the store cannot serve', async () => {
    const targets: TargetRegistry = { inboxOnly: async () => ({ close: async () => {} }) };
    const { code, errText } = await run(
      ['dead-letters', 'list', '--store', 'inboxOnly'],
      {},
      targets,
    );
    expect(code).toBe(2);
    expect(errText()).toContain('store "inboxOnly" has no dead letters');
  });

  it('asks for a PostgreSQL URL', async () => {
    const { code, errText } = await run(['inbox', 'stats', '--store', 'postgres']);
    expect(code).toBe(2);
    expect(errText()).toContain('--pg-url or ONCEFLOW_PG_URL');
  });
});

describe('help, version and failures', () => {
  it('--help prints the usage on stdout and exits 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const { code, text, err } = await run(argv);
      expect(code).toBe(0);
      expect(err).toEqual([]);
      expect(text()).toBe(USAGE);
    }
    expect(USAGE).toContain('onceflow dead-letters redrive (<id>... | --all) [--apply]');
  });

  it('<command> --help and help <command> print that command only', async () => {
    const list = await run(['dead-letters', 'list', '--help']);
    expect(list.code).toBe(0);
    expect(list.text()).toContain(
      'onceflow dead-letters list [--limit N] [--json] [target options]',
    );
    expect(list.text()).not.toContain('redrive');
    expect((await run(['help', 'dead-letters', 'list'])).text()).toBe(list.text());
    const group = await run(['inbox', '--help']);
    expect(group.code).toBe(0);
    expect(group.text()).toContain('onceflow inbox stats [--json]');
    expect(group.text()).toContain('onceflow inbox purge --older-than <duration>');
    expect(group.text()).not.toContain('dead-letters');
  });

  it('help for an unknown command is a command-line error', async () => {
    const { code, errText } = await run(['frobnicate', '--help']);
    expect(code).toBe(2);
    expect(errText()).toContain('unknown command "frobnicate"');
  });

  it("each command's help lists every flag the command takes", async () => {
    for (const [name, flags] of Object.entries(COMMAND_FLAGS)) {
      const { code, text } = await run([...name.split(' '), '--help']);
      expect(code).toBe(0);
      const help = text();
      expect(help).toBe(commandHelp(name as CommandName));
      for (const flag of flags)
        expect(help, `${name} --${flag}`).toMatch(new RegExp(`^  --${flag}\\b`, 'm'));
      expect(help).toContain('Exit codes:');
    }
  });

  it('the usage names every store the CLI opens and every variable it reads', () => {
    for (const store of Object.keys(defaultTargets))
      expect(USAGE).toMatch(new RegExp(`^  ${store} `, 'm'));
    const src = fileURLToPath(new URL('../src/', import.meta.url));
    const read = new Set<string>();
    for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.endsWith('usage.ts')) continue;
      const text = readFileSync(join(src, file), 'utf8');
      for (const [name] of text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) read.add(name.slice(4));
    }
    expect([...read].sort()).toEqual(
      expect.arrayContaining(['AWS_ACCESS_KEY_ID', 'ONCEFLOW_PG_URL', 'ONCEFLOW_SQS_FIFO']),
    );
    for (const name of read) expect(USAGE, name).toContain(name);
  });

  it('--version prints the package version, wherever it stands', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    for (const argv of [['--version'], ['replay', '--version']]) {
      const { code, out } = await run(argv);
      expect(code).toBe(0);
      expect(out).toEqual([pkg.version]);
    }
  });

  it('fails with 1, creating nothing, when the database file does not exist', async () => {
    const db = tempDbPath();
    const { code, errText } = await run(['inbox', 'stats'], { ONCEFLOW_DB: db });
    expect(code).toBe(1);
    expect(errText()).toContain(`no onceflow database at ${db}`);
    expect(existsSync(db)).toBe(false);
  });
});

describe('parseCommandLine', () => {
  it('takes defaults from the environment, flags winning', () => {
    const env = {
      ONCEFLOW_DB: '/env.db',
      ONCEFLOW_QUEUE: 'q-env',
      ONCEFLOW_PG_URL: 'postgres://env',
    };
    const a = parseCommandLine(['inbox', 'stats'], env);
    expect(a.target).toEqual({
      store: 'embedded',
      to: 'embedded',
      db: '/env.db',
      queue: 'q-env',
      pgUrl: 'postgres://env',
    });
    const b = parseCommandLine(
      ['--queue', 'q-flag', 'dead-letters', 'list', '--db', '/flag.db'],
      env,
    );
    expect(b.target).toMatchObject({ db: '/flag.db', queue: 'q-flag' });
    expect(parseCommandLine(['inbox', 'stats'], {}).target.db).toBe(DEFAULT_DB);
  });

  it('publishes replays through --to, defaulting to --store', () => {
    const argv = ['replay', '--since', '2025-03-01', '--store', 'postgres'];
    expect(parseCommandLine(argv, {}).target.to).toBe('postgres');
    expect(parseCommandLine([...argv, '--to', 'embedded'], {}).target.to).toBe('embedded');
  });

  it('parses selections and dry-run flags', () => {
    expect(parseCommandLine(['dead-letters', 'purge', '3', '4'], {}).command).toEqual({
      name: 'dead-letters purge',
      select: { ids: ['3', '4'] },
      apply: false,
      json: false,
    });
    expect(
      parseCommandLine(['dead-letters', 'redrive', '--all', '--apply'], {}).command,
    ).toMatchObject({
      select: { all: true },
      apply: true,
    });
  });
});

describe('durations and instants', () => {
  it('parses units and sums', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1d12h')).toBe(129_600_000);
    expect(parseDuration('2w')).toBe(1_209_600_000);
    for (const bad of ['', '30', 'd', '1x', '0s', '1d 2h', '-1d']) {
      expect(() => parseDuration(bad)).toThrow(CommandLineError);
    }
  });

  it('reads a zoneless instant as UTC', () => {
    expect(parseInstant('2025-03-01', '--since').toISOString()).toBe('2025-03-01T00:00:00.000Z');
    expect(parseInstant('2025-03-01T12:30', '--since').toISOString()).toBe(
      '2025-03-01T12:30:00.000Z',
    );
    expect(parseInstant('2025-03-01T12:30:00+02:00', '--since').toISOString()).toBe(
      '2025-03-01T10:30:00.000Z',
    );
    expect(() => parseInstant('2025-13-45', '--since')).toThrow(CommandLineError);
  });
});
