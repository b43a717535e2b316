import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMAND_FLAGS, type CommandName, DEFAULT_DB, parseCommandLine } from '../src/args.js';
import { commandHelp } from '../src/command-help.js';
import { parseDuration, parseInstant } from '../src/duration.js';
import { runCli } from '../src/run.js';
import { createMemoryStore } from '@onceflow/core/testing';
import type { StoreRegistry } from '../src/target.js';
import { defaultStores, defaultTransports } from '../src/targets.js';
import { USAGE } from '../src/usage.js';
import { CommandLineError } from '../src/command-line-error.js';
import { captureOutput, deadLetter, event, tempDbPath } from './helpers.js';

const run = async (argv: string[], env: Record<string, string> = {}, stores?: StoreRegistry) => {
  const io = captureOutput();
  const code = await runCli(argv, { output: io.output, env, stores });
  return { code, ...io };
};

describe('command-line errors exit with 2 and touch nothing', () => {
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['dead-letters'], /"dead-letters" needs a subcommand/],
    [['dead-letters', 'resend'], /unknown command "dead-letters resend"/],
    [['events'], /"events" needs a subcommand/],
    [['dead-letters', 'redrive'], /give <source>\/<id>\.\.\., filters \(--source, …\) or --all/],
    [['dead-letters', 'purge', 'stripe/7', '--all'], /give ids, filters or --all, one of them/],
    [['dead-letters', 'purge', '--source', 's', '--all'], /give ids, filters or --all, one/],
    [['dead-letters', 'purge', 'evt_1'], /"evt_1" is not <source>\/<id>/],
    [['dead-letters', 'redrive', '--all', '--aply'], /Unknown option '--aply'/],
    [['dead-letters', 'redrive', '--all', '--cursor', 'x'], /redrive does not take --cursor/],
    [['dead-letters', 'purge', '--all', '--to', 'sqs'], /purge does not take --to/],
    [['dead-letters', 'redrive', '--all', '--rate', 'fast'], /--rate: "fast" is not a rate/],
    [['dead-letters', 'redrive', '--all', '--actor', ''], /--actor: 1 to 200 characters/],
    [['dead-letters', 'show'], /give the source and id/],
    [['events', 'show', 'stripe'], /give the source and id/],
    [['events', 'show', 'stripe', 'evt_1', 'more'], /unexpected argument "more"/],
    [['events', 'list', '--state', 'done'], /--state: "done" is not a state \(received, /],
    [['events', 'list', '--cursor', 'nope'], /--cursor: "nope" is not a cursor a listing printed/],
    [
      ['events', 'list', '--older-than', '1h', '--newer-than', '30m'],
      /--newer-than must be longer/,
    ],
    [['events', 'list', '--queue', 'q'], /events list does not take --queue/],
    [['dead-letters', 'list', '--state', 'completed'], /list does not take --state/],
    [['dead-letters', 'list', '--limit', '0'], /--limit: expected a positive integer/],
    [['dead-letters', 'list', '--limit', '1001'], /--limit: at most 1000 per page/],
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
    expect(errText()).toContain('unknown store "nats" (known: embedded, postgres, redis)');
  });

  it('refuses a command the store cannot serve, and an unknown --to before changing anything', async () => {
    const records = createMemoryStore();
    await deadLetter(records, [event('evt_1')]);
    const stores: StoreRegistry = { recordsOnly: async () => ({ records, close: async () => {} }) };
    const stats = await run(['inbox', 'stats', '--store', 'recordsOnly'], {}, stores);
    expect([stats.code, stats.errText()]).toEqual([
      2,
      'onceflow: store "recordsOnly" has no inbox',
    ]);
    const replay = await run(
      ['replay', '--since', '2025-01-01', '--store', 'recordsOnly'],
      {},
      stores,
    );
    expect(replay.code).toBe(2);
    expect(replay.errText()).toContain('has no inbox that can list stored events');
    const argv = ['dead-letters', 'redrive', 'stripe/evt_1', '--store', 'recordsOnly', '--apply'];
    const noTo = await run(argv, {}, stores);
    expect(noTo.code).toBe(2);
    expect(noTo.errText()).toContain('dead-letters redrive --apply needs --to (one of: embedded,');
    const nats = await run([...argv, '--to', 'nats'], {}, stores);
    expect(nats.errText()).toContain(
      'unknown transport "nats" (known: embedded, sqs, rabbitmq, kafka, bullmq)',
    );
    expect((await records.get('stripe', 'evt_1'))?.state).toBe('dead-lettered');
    const dry = await run(argv.slice(0, -1), {}, stores);
    expect(dry.code).toBe(0);
    expect(dry.out[1]).toContain('(give --to with --apply: the transport to publish through)');
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
    expect(USAGE).toContain('onceflow dead-letters redrive (<source>/<id>... | <filters> | --all)');
    expect(USAGE).toContain('onceflow events show <source> <id> [--json]');
  });

  it('<command> --help and help <command> print that command only', async () => {
    const list = await run(['dead-letters', 'list', '--help']);
    expect(list.code).toBe(0);
    expect(list.text()).toContain(
      'onceflow dead-letters list [--source S] [--type T] [--reason TEXT] [--older-than D]',
    );
    expect(list.text()).toContain(
      '[--newer-than D] [--limit N] [--cursor C] [--json] [target options]',
    );
    expect(list.text()).not.toContain('redrive');
    expect((await run(['help', 'dead-letters', 'list'])).text()).toBe(list.text());
    const group = await run(['inbox', '--help']);
    expect(group.code).toBe(0);
    expect(group.text()).toContain('onceflow inbox stats [--json]');
    expect(group.text()).toContain('onceflow inbox purge --older-than <duration>');
    expect(group.text()).not.toContain('dead-letters');
    const events = await run(['events', '--help']);
    expect(events.text()).toContain('onceflow events show <source> <id> [--json]');
    expect(events.text()).toContain('Commands:');
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

  it('the usage names every store and transport the CLI opens and every variable it reads', () => {
    const stores = USAGE.slice(USAGE.indexOf('Stores (--store)'), USAGE.indexOf('Transports'));
    const transports = USAGE.slice(USAGE.indexOf('Transports (--to)'));
    for (const store of Object.keys(defaultStores))
      expect(stores).toMatch(new RegExp(`^  ${store} `, 'm'));
    for (const transport of Object.keys(defaultTransports))
      expect(transports).toMatch(new RegExp(`^  ${transport} `, 'm'));
    const src = fileURLToPath(new URL('../src/', import.meta.url));
    const read = new Set<string>();
    for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.endsWith('usage.ts')) continue;
      const text = readFileSync(join(src, file), 'utf8');
      for (const [name] of text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) read.add(name.slice(4));
    }
    expect([...read].sort()).toEqual(
      expect.arrayContaining([
        'AWS_ACCESS_KEY_ID',
        'ONCEFLOW_PG_URL',
        'ONCEFLOW_SQS_FIFO',
        'ONCEFLOW_REDIS_PREFIX',
        'ONCEFLOW_TO',
      ]),
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
      ['--queue', 'q-flag', 'dead-letters', 'redrive', '--all', '--db', '/flag.db'],
      env,
    );
    expect(b.target).toMatchObject({ db: '/flag.db', queue: 'q-flag' });
    expect(parseCommandLine(['inbox', 'stats'], {}).target.db).toBe(DEFAULT_DB);
  });

  it('publishes through --to (or ONCEFLOW_TO), embedded by default only for the embedded store', () => {
    const argv = ['replay', '--since', '2025-03-01', '--store', 'postgres'];
    expect(parseCommandLine(argv, {}).target.to).toBeUndefined();
    expect(parseCommandLine(argv, { ONCEFLOW_TO: 'sqs' }).target.to).toBe('sqs');
    expect(parseCommandLine([...argv, '--to', 'embedded'], {}).target.to).toBe('embedded');
    expect(parseCommandLine(['replay', '--since', '2025-03-01'], {}).target.to).toBe('embedded');
  });

  it('parses selections, filters, ages, rate, actor and dry-run flags', () => {
    const now = new Date('2025-03-01T12:00:00Z');
    expect(
      parseCommandLine(['dead-letters', 'purge', 'stripe/3', 'github/a/b', 'stripe/3'], {}, now)
        .command,
    ).toEqual({
      name: 'dead-letters purge',
      select: {
        ids: [
          { source: 'stripe', id: '3' },
          { source: 'github', id: 'a/b' },
        ],
        limit: undefined,
      },
      actor: expect.stringMatching(/^cli:.+/),
      rate: undefined,
      apply: false,
      json: false,
    });
    const argv = ['dead-letters', 'redrive', '--source', 'stripe', '--reason', 'schema'];
    expect(
      parseCommandLine(
        [...argv, '--older-than', '1h', '--rate', '2.5/s', '--actor', 'cli:ops', '--apply'],
        {},
        now,
      ).command,
    ).toMatchObject({
      select: {
        filter: {
          source: 'stripe',
          reason: 'schema',
          updatedBefore: new Date('2025-03-01T11:00:00Z'),
        },
      },
      rate: 2.5,
      actor: 'cli:ops',
      apply: true,
    });
    expect(parseCommandLine(['dead-letters', 'redrive', '--all'], {}).command).toMatchObject({
      select: { filter: {} },
    });
    expect(parseCommandLine(['events', 'show', 'stripe/evt_1'], {}).command).toMatchObject({
      source: 'stripe',
      id: 'evt_1',
    });
    expect(
      parseCommandLine(['events', 'list', '--state', 'retry-scheduled'], {}).command,
    ).toMatchObject({ filter: { state: 'retry-scheduled' }, limit: 50 });
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
