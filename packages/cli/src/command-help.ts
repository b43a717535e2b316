import type { CommandName, HelpTopic } from './args.js';

/** What `onceflow <command> --help` prints for one command. */
interface CommandHelp {
  /** After `onceflow <command> `; each further line is printed aligned under the first. */
  readonly synopsis: string;
  /** One line, for the command lists. */
  readonly summary: string;
  /** What it does, wrapped to print as is. */
  readonly about: string;
  /** The command's own flags (the target flags are shared): flag and meaning. */
  readonly options: readonly (readonly [flag: string, meaning: string])[];
}

const JSON_FLAG = ['--json', 'one JSON document on stdout, for scripts'] as const;
const APPLY_FLAG = ['--apply', 'do it; without it the command is a dry run'] as const;
const DRY_RUN = `A DRY RUN unless --apply: it prints how many it would touch, and which, and
changes nothing.`;

/** Every command's help; `COMMAND_FLAGS` in args.ts lists the same flags (a test checks it). */
export const COMMAND_HELP: Readonly<Record<CommandName, CommandHelp>> = {
  'dead-letters list': {
    synopsis: '[--limit N] [--json]',
    summary: 'the oldest dead letters and how many there are',
    about: `Prints the oldest dead letters (id, when, source, type, event id, attempts, reason) and
the total. Read-only.`,
    options: [['--limit N', 'most rows to print, oldest first (default 50)'], JSON_FLAG],
  },
  'dead-letters show': {
    synopsis: '<id> [--json]',
    summary: 'one dead letter in full',
    about: `Prints one dead letter in full: reason, attempts, last error, the envelope with its
headers and payload. Read-only. Exits 1 when no dead letter has that id.`,
    options: [JSON_FLAG],
  },
  'dead-letters redrive': {
    synopsis: '(<id>... | --all) [--apply] [--json]',
    summary: 'send dead letters back to the work queue',
    about: `Sends the dead letters with these ids, or every one with --all, back to the work queue,
attempts starting again at 1.
${DRY_RUN}
An id that does not exist fails the command (exit 1) before anything is touched. With --all
--apply it acts on exactly the dead letters it listed: one arriving meanwhile stays.`,
    options: [['--all', 'every dead letter stored now'], APPLY_FLAG, JSON_FLAG],
  },
  'dead-letters purge': {
    synopsis: '(<id>... | --all) [--apply] [--json]',
    summary: 'delete dead letters for good',
    about: `Deletes the dead letters with these ids, or every one with --all, for good.
${DRY_RUN}
An id that does not exist fails the command (exit 1) before anything is touched.`,
    options: [['--all', 'every dead letter stored now'], APPLY_FLAG, JSON_FLAG],
  },
  replay: {
    synopsis: `--since <iso> [--until <iso>] [--source S] [--type T] [--limit N]
[--replay-id ID] [--to STORE] [--apply] [--json]`,
    summary: 'publish processed events again, so workers process them again',
    about: `Publishes copies of the processed events the inbox received in the window, e.g. after
fixing a handler bug. A copy has the id "<id>#replay-<replay-id>" and the header
x-onceflow-replay-of, so workers process it again on purpose. Pending and enqueued events in
the window are counted and skipped.
${DRY_RUN}
The replay id is printed: run the same command with --until and --replay-id to resume a replay
that stopped, without doubles. Reads an inbox that can list events (embedded, postgres) and
publishes through --to (a store with a transport).`,
    options: [
      ['--since <iso>', 'received at or after this instant (required)'],
      ['--until <iso>', 'received before this instant (default: now)'],
      ['--source S', 'only events of this source'],
      ['--type T', 'only events of this type'],
      ['--limit N', 'most events to replay, oldest first (default: all)'],
      ['--replay-id ID', 'names the replay: 1 to 64 of A-Z a-z 0-9 . _ - (default: the time)'],
      ['--to STORE', "publish through this store's transport (default: --store)"],
      ['--apply', 'publish; without it the command is a dry run'],
      JSON_FLAG,
    ],
  },
  'inbox stats': {
    synopsis: '[--json]',
    summary: 'inbox counters and the age of the oldest unprocessed event',
    about: `Prints pending (claimed, not yet enqueued), enqueued, processed and conflicts, and the age
of the oldest event not yet processed: the number to alert on. Read-only. Needs a store with an
inbox (embedded, postgres).`,
    options: [JSON_FLAG],
  },
  'inbox purge': {
    synopsis: '--older-than <duration> [--apply] [--json]',
    summary: 'delete old enqueued and processed rows (retention)',
    about: `Deletes the enqueued and processed inbox rows received more than <duration> ago; pending
claims are never purged.
${DRY_RUN}
A purged id is forgotten: if its sender delivers it again, the inbox accepts it as new. Keep the
retention longer than every sender's retry horizon.`,
    options: [
      ['--older-than <duration>', 'e.g. 30d, 12h, 1d12h (required)'],
      APPLY_FLAG,
      JSON_FLAG,
    ],
  },
};

export const EXIT_CODES = `Exit codes:
  0  done, a dry run included
  1  failed: a store unreachable or missing (or its packages not installed), an unknown id,
     a publish that failed
  2  command-line error: an unknown command or flag, a missing or malformed value, a store
     that cannot serve the command; nothing was touched`;

/** `onceflow <name> <synopsis>`, its further lines aligned under the first. */
export function synopsisOf(name: CommandName): string {
  const head = `  onceflow ${name} `;
  const [first, ...more] = COMMAND_HELP[name].synopsis.split('\n');
  return [head + first, ...more.map((line) => ' '.repeat(head.length) + line)].join('\n');
}

const columns = (rows: readonly (readonly [string, string])[]): string[] => {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
};

const inGroup = (group: string) =>
  (Object.keys(COMMAND_HELP) as CommandName[]).filter((name) => name.startsWith(`${group} `));

/** The help for one command or group of commands. */
export function commandHelp(topic: HelpTopic): string {
  if (topic === 'dead-letters' || topic === 'inbox') {
    const names = inGroup(topic);
    return [
      `onceflow ${topic}: ${topic === 'inbox' ? 'the inbox' : 'the dead letters of a queue'}`,
      '',
      'Usage:',
      ...names.map(synopsisOf),
      '',
      'Commands:',
      ...columns(names.map((name) => [name, COMMAND_HELP[name].summary])),
      '',
      `Run "onceflow ${topic} <command> --help" for one of them, "onceflow --help" for the stores.`,
    ].join('\n');
  }
  const help = COMMAND_HELP[topic];
  return [
    `onceflow ${topic}: ${help.summary}`,
    '',
    'Usage:',
    `${synopsisOf(topic)} [target options]`,
    '',
    help.about,
    '',
    'Options:',
    ...columns([...help.options, ['-h, --help', 'this help']]),
    '',
    'Target options (--store, --db, --queue, --pg-url), the stores and the environment variables',
    'they read: "onceflow --help".',
    '',
    EXIT_CODES,
  ].join('\n');
}
