import type { HelpTopic } from './args.js';
import { EXIT_CODES } from './exit-codes.js';
import type { CommandName, Group } from './flags.js';

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

type Option = readonly [flag: string, meaning: string];

const JSON_FLAG: Option = ['--json', 'one JSON document on stdout, for scripts'];
const JSON_ACT: Option = [
  '--json',
  'one JSON document on stdout; progress as NDJSON lines on stderr',
];
const APPLY_FLAG: Option = ['--apply', 'do it; without it the command is a dry run'];
const DRY_RUN = `A DRY RUN unless --apply: it prints how many it would touch, which (the first 20),
and what would happen to each, and changes nothing.`;
const FILTERS: readonly Option[] = [
  ['--source S', 'only records of this source'],
  ['--type T', 'only records of this type'],
  ['--reason TEXT', 'only records whose reason contains TEXT'],
  ['--older-than <duration>', 'last state change longer ago than this (e.g. 1h, 2d)'],
  ['--newer-than <duration>', 'last state change more recent than this'],
];
const PAGE: readonly Option[] = [
  ['--limit N', 'most rows per page, oldest first (default 50, at most 1000)'],
  ['--cursor C', 'the next page: the cursor the previous page printed'],
  JSON_FLAG,
];
const RATE: Option = ['--rate N', 'most per second, e.g. 50 or 50/s (default: as fast as it goes)'];
const ACT = (verb: string): readonly Option[] => [
  ['--all', 'every dead letter (instead of ids or filters)'],
  ['--limit N', `most to ${verb}, oldest first (default: all selected)`],
  RATE,
  ['--actor NAME', "recorded in each record's history (default cli:<os user>)"],
  APPLY_FLAG,
  JSON_ACT,
];
const PUBLISH: readonly Option[] = [
  ['--to NAME', 'the transport to publish through (default: embedded for --store embedded)'],
  ['--queue NAME', 'its queue, for Kafka the work topic (default events)'],
];
const SELECT = `Selects by <source>/<id> (the source is up to the first "/"), by <filters> (any of
--source, --type, --reason, --older-than, --newer-than), or --all: exactly one of the three. A named id that is not a dead letter fails the command (exit 3)
before anything is touched. With --apply it acts on exactly the dead letters it selected: one
arriving meanwhile stays. Progress (count, rate, ETA) goes to stderr on runs over a second.`;

/** Every command's help; `COMMAND_FLAGS` in flags.ts lists the same flags (a test checks it). */
export const COMMAND_HELP: Readonly<Record<CommandName, CommandHelp>> = {
  'events show': {
    synopsis: '<source> <id> [--json]',
    summary: "one event's record and its history",
    about: `Prints the event record of <source> <id>: state, attempts, next attempt, last error,
reason, consumer, trace id, received and updated times, and its history as a timeline (time,
state, attempt, error code, actor, note; the last 20 state changes). Read-only. Exits 3 when
the store has no record of it.`,
    options: [JSON_FLAG],
  },
  'events list': {
    synopsis: `[--state S] [--source S] [--type T] [--reason TEXT] [--older-than D]
[--newer-than D] [--limit N] [--cursor C] [--json]`,
    summary: 'records by state, source, type, reason and age, a page at a time',
    about: `Prints the records that match, oldest last state change first, one page at a time,
with how many match in all and the cursor of the next page. Read-only.`,
    options: [
      [
        '--state S',
        'received, enqueued, processing, retry-scheduled, completed, dead-lettered, discarded',
      ],
      ...FILTERS,
      ...PAGE,
    ],
  },
  'dead-letters list': {
    synopsis: `[--source S] [--type T] [--reason TEXT] [--older-than D]
[--newer-than D] [--limit N] [--cursor C] [--json]`,
    summary: 'the dead letters, oldest first, a page at a time',
    about: `Prints the dead letters that match (when, source, id, type, attempts, reason), oldest
first, with how many match in all and the cursor of the next page. Read-only.`,
    options: [...FILTERS, ...PAGE],
  },
  'dead-letters show': {
    synopsis: '<source> <id> [--json]',
    summary: 'one dead letter in full',
    about: `Prints one dead letter in full: its record and history, the stored envelope's headers
(authorization, cookies, signatures and HMACs masked) and its payload. Read-only. Exits 3 when
there is no record, or it is not a dead letter.`,
    options: [JSON_FLAG],
  },
  'dead-letters redrive': {
    synopsis: `(<source>/<id>... | <filters> | --all) [--limit N] [--rate N]
[--actor NAME] [--to NAME] [--queue NAME] [--apply] [--json]`,
    summary: 'publish dead letters again, so workers run them from attempt 1',
    about: `Publishes each selected dead letter's stored envelope again through --to, with a dedupe
key of its own, and records it as redriven by --actor; a worker then runs it from attempt 1.
${DRY_RUN}
${SELECT}
If a publish fails it stops (exit 1) saying how far it got; run it again to go on.`,
    options: [...FILTERS, ...ACT('redrive'), ...PUBLISH],
  },
  'dead-letters purge': {
    synopsis: `(<source>/<id>... | <filters> | --all) [--limit N] [--rate N]
[--actor NAME] [--apply] [--json]`,
    summary: 'mark dead letters discarded: never delivered again',
    about: `Marks each selected dead letter discarded, with --actor in its history: never delivered
again, kept for dedupe and audit until retention removes it.
${DRY_RUN}
${SELECT}`,
    options: [...FILTERS, ...ACT('purge')],
  },
  replay: {
    synopsis: `(<source>/<id>... | --since <when> [--until <when>] [--source S] [--type T]
[--limit N]) [--rate N] [--replay-id ID] [--to NAME] [--queue NAME]
[--apply] [--json]`,
    summary: 'publish completed events again, so workers process them again',
    about: `Publishes copies of completed events, e.g. after fixing a handler bug: the named
<source>/<id>s, or those the inbox received in the window --since to --until. A copy has the
id "<id>#replay-<replay-id>" and the header x-onceflow-replay-of, so workers process it again
on purpose. Events in the window not completed (on their way, dead-lettered, discarded) are
counted and skipped; a named id with no record, not completed or without a stored envelope
fails the command (exit 3) before anything is published.
${DRY_RUN}
It also says where the copies would go and, with --rate, how long that takes. Progress (count,
rate, ETA) goes to stderr on runs over a second. The replay id is printed: run the same command
with --until and --replay-id to resume a replay that stopped, without doubles. A window reads a
store that keeps envelopes (embedded, postgres); ids read any store that kept theirs.`,
    options: [
      ['--since <when>', 'received at or after this: an ISO-8601 instant or a duration ago (2h)'],
      ['--until <when>', 'received before this (default: now)'],
      ['--source S', 'only events of this source'],
      ['--type T', 'only events of this type'],
      ['--limit N', 'most events to replay, oldest first (default: all)'],
      RATE,
      ['--replay-id ID', 'names the replay: 1 to 64 of A-Z a-z 0-9 . _ - (default: the time)'],
      ...PUBLISH,
      ['--apply', 'publish; without it the command is a dry run'],
      JSON_ACT,
    ],
  },
  'inbox stats': {
    synopsis: '[--json]',
    summary: 'inbox counters and the age of the oldest unprocessed event',
    about: `Prints pending (claimed, not yet enqueued), enqueued (not yet completed), processed
(completed or discarded) and conflicts, and the age of the oldest event not yet processed: the
number to alert on. Read-only.`,
    options: [JSON_FLAG],
  },
  'inbox purge': {
    synopsis: '--older-than <duration> [--apply] [--json]',
    summary: 'delete old enqueued, completed and discarded records (retention)',
    about: `Deletes the enqueued, completed and discarded records received more than <duration> ago;
received claims, attempts in progress or scheduled, and dead letters are never purged.
${DRY_RUN}
A purged id is forgotten: if its sender delivers it again, the inbox accepts it as new. Keep the
retention longer than every sender's retry horizon.`,
    options: [
      ['--older-than <duration>', 'e.g. 30d, 12h, 1d12h (required)'],
      APPLY_FLAG,
      JSON_FLAG,
    ],
  },
  console: {
    synopsis:
      '[--port N] [--host ADDR] [--base-path PATH] [--write] [--to NAME] [--queue NAME] [--json]',
    summary: 'serve the operator console in the browser over the record store',
    about: `Serves @onceflow/console over the record store (--store) until Ctrl-C: the overview,
events and each event's timeline, dead letters. Sign in with the token in
ONCEFLOW_CONSOLE_TOKEN (16 characters or more; never a flag or the config file, so it shows
neither in ps nor in a repository). Read-only unless --write; with --write, purge is offered,
and redrive too when --to names the transport the workers consume. Every action is a dry run
first and is recorded in each record's history as console:cli. The config file's console
section sets port, host, basePath and write.`,
    options: [
      [
        '--port N',
        'the port to listen on (default 8088, 0: any free one); env ONCEFLOW_CONSOLE_PORT',
      ],
      ['--host ADDR', 'the address to listen on (default 127.0.0.1); env ONCEFLOW_CONSOLE_HOST'],
      ['--base-path PATH', 'the path it answers under (default /); env ONCEFLOW_CONSOLE_BASE_PATH'],
      ['--write', 'allow redrive and purge (default read-only); env ONCEFLOW_CONSOLE_WRITE=true'],
      ...PUBLISH,
      ['--json', 'print where it listens as one JSON object'],
    ],
  },
  config: {
    synopsis: '[--to NAME] [--queue NAME] [--json] | --schema',
    summary: 'the settings a command would run with, and where each comes from',
    about: `Prints the config file read (or where it was looked for) and each setting a command
would run with: the store, the transport, the queue, each store's and broker's address, the
default actor and rate, with where it comes from (a flag, a variable, the config file, the
default). Passwords in URLs are masked. Opens no store and no broker; exits 2 when the config
file is refused, so it also checks a file before a deploy. Read-only. --schema prints the
file's JSON Schema instead, for editors ("$schema" in a JSON config file).`,
    options: [
      ['--to NAME', 'as the commands that publish take it'],
      ['--queue NAME', 'likewise'],
      ['--schema', "the config file's JSON Schema (draft 2020-12), without reading the file"],
      JSON_FLAG,
    ],
  },
};

const GROUP_TITLE: Readonly<Record<Group, string>> = {
  events: 'the event record: what happened to each event',
  'dead-letters': 'dead letters, through the event record, on every broker alike',
  inbox: "the receiver's inbox",
};

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

const isGroup = (topic: HelpTopic): topic is Group => Object.hasOwn(GROUP_TITLE, topic);

/** The help for one command or group of commands. */
export function commandHelp(topic: HelpTopic): string {
  if (isGroup(topic)) {
    const names = inGroup(topic);
    return [
      `onceflow ${topic}: ${GROUP_TITLE[topic]}`,
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
    'Target options (--config, --store, --db, --pg-url), the config file, the stores and',
    'transports and the environment variables they read: "onceflow --help".',
    '',
    EXIT_CODES,
  ].join('\n');
}
