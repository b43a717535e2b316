import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { DeadLetterSelection } from './commands/dead-letters.js';
import type { ReplayOptions } from './commands/replay.js';
import { parseDuration, parseInstant } from './duration.js';
import { isReplayId } from './replay-envelope.js';
import { CommandLineError } from './command-line-error.js';
import type { Env, TargetOptions } from './target.js';

const OPTIONS = {
  store: { type: 'string' },
  db: { type: 'string' },
  queue: { type: 'string' },
  'pg-url': { type: 'string' },
  to: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  all: { type: 'boolean' },
  apply: { type: 'boolean' },
  since: { type: 'string' },
  until: { type: 'string' },
  source: { type: 'string' },
  type: { type: 'string' },
  'replay-id': { type: 'string' },
  'older-than': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

type Flag = keyof typeof OPTIONS;
const parse = (args: string[]) =>
  parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });

type Values = ReturnType<typeof parse>['values'];

const TARGET_FLAGS: readonly Flag[] = ['store', 'db', 'queue', 'pg-url', 'help'];

/** The flags each command accepts besides the target flags. */
export const COMMAND_FLAGS = {
  'dead-letters list': ['limit', 'json'],
  'dead-letters show': ['json'],
  'dead-letters redrive': ['all', 'apply', 'json'],
  'dead-letters purge': ['all', 'apply', 'json'],
  replay: ['since', 'until', 'source', 'type', 'limit', 'replay-id', 'to', 'apply', 'json'],
  'inbox stats': ['json'],
  'inbox purge': ['older-than', 'apply', 'json'],
} as const satisfies Record<string, readonly Flag[]>;

export type CommandName = keyof typeof COMMAND_FLAGS;

/** What `--help` can be about: one command, a group of them, or (undefined) everything. */
export type HelpTopic = CommandName | 'dead-letters' | 'inbox';

/** A parsed command, ready to run. */
export type Command =
  | { readonly name: 'help'; readonly topic?: HelpTopic | undefined }
  | { readonly name: 'version' }
  | {
      readonly name: 'dead-letters list';
      readonly limit?: number | undefined;
      readonly json: boolean;
    }
  | { readonly name: 'dead-letters show'; readonly id: string; readonly json: boolean }
  | {
      readonly name: 'dead-letters redrive' | 'dead-letters purge';
      readonly select: DeadLetterSelection;
      readonly apply: boolean;
      readonly json: boolean;
    }
  | ({ readonly name: 'replay'; readonly apply: boolean; readonly json: boolean } & Omit<
      ReplayOptions,
      'apply' | 'json' | 'batchSize'
    >)
  | { readonly name: 'inbox stats'; readonly json: boolean }
  | {
      readonly name: 'inbox purge';
      readonly olderThanMs: number;
      readonly apply: boolean;
      readonly json: boolean;
    };

/** Which stores a command runs against, and what they are opened with. */
export interface TargetSelection extends Omit<TargetOptions, 'env'> {
  readonly store: string;
  /** Replay only: the store whose transport publishes the copies. */
  readonly to: string;
}

export interface Invocation {
  readonly command: Command;
  readonly target: TargetSelection;
}

export const DEFAULT_DB = '.onceflow/onceflow.db';
export const DEFAULT_QUEUE = 'events';

function positiveInt(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(text))
    throw new CommandLineError(`--${flag}: expected a positive integer, got "${text}"`);
  return Number(text);
}

function commandName(positionals: readonly string[]): { name: CommandName; rest: string[] } {
  const [group, sub, ...rest] = positionals;
  if (group === 'replay') return { name: 'replay', rest: positionals.slice(1) };
  const name = `${group} ${sub ?? ''}`.trim();
  if (Object.hasOwn(COMMAND_FLAGS, name)) return { name: name as CommandName, rest };
  if (group === 'dead-letters' || group === 'inbox') {
    throw new CommandLineError(sub ? `unknown command "${name}"` : `"${group}" needs a subcommand`);
  }
  throw new CommandLineError(`unknown command "${group}"`);
}

/** `help replay`, `replay --help`, `dead-letters --help`: the command the help is about. */
function helpTopic(positionals: readonly string[]): HelpTopic | undefined {
  const words = positionals[0] === 'help' ? positionals.slice(1) : positionals;
  const [group, sub] = words;
  if (group === undefined) return undefined;
  if ((group === 'dead-letters' || group === 'inbox') && sub === undefined) return group;
  return commandName(words).name;
}

function selection(ids: readonly string[], all: boolean, name: string): DeadLetterSelection {
  if (all && ids.length > 0) throw new CommandLineError(`${name}: give ids or --all, not both`);
  if (all) return { all: true };
  if (ids.length === 0) throw new CommandLineError(`${name}: give the ids to act on, or --all`);
  return { ids };
}

function build(name: CommandName, rest: readonly string[], v: Values): Command {
  const json = v.json === true;
  const apply = v.apply === true;
  const noArgs = () => {
    if (rest.length > 0) throw new CommandLineError(`${name}: unexpected argument "${rest[0]}"`);
  };
  switch (name) {
    case 'dead-letters list':
      noArgs();
      return { name, limit: positiveInt(v.limit, 'limit'), json };
    case 'dead-letters show': {
      const [id, extra] = rest;
      if (id === undefined)
        throw new CommandLineError('dead-letters show: give the id of a dead letter');
      if (extra !== undefined)
        throw new CommandLineError(`${name}: unexpected argument "${extra}"`);
      return { name, id, json };
    }
    case 'dead-letters redrive':
    case 'dead-letters purge':
      return { name, select: selection(rest, v.all === true, name), apply, json };
    case 'replay': {
      noArgs();
      if (v.since === undefined) throw new CommandLineError('replay: --since is required');
      const since = parseInstant(v.since, '--since');
      const until = v.until === undefined ? undefined : parseInstant(v.until, '--until');
      if (until && until <= since)
        throw new CommandLineError('replay: --until must be after --since');
      const replayId = v['replay-id'];
      if (replayId !== undefined && !isReplayId(replayId)) {
        throw new CommandLineError('--replay-id: 1 to 64 characters of A-Z a-z 0-9 . _ -');
      }
      const limit = positiveInt(v.limit, 'limit');
      return { name, since, until, source: v.source, type: v.type, limit, replayId, apply, json };
    }
    case 'inbox stats':
      noArgs();
      return { name, json };
    case 'inbox purge': {
      noArgs();
      if (v['older-than'] === undefined)
        throw new CommandLineError('inbox purge: --older-than is required');
      return { name, olderThanMs: parseDuration(v['older-than'], '--older-than'), apply, json };
    }
  }
}

/**
 * Parses a command line (without `node` and the script) into a command and its target, applying
 * environment defaults (`ONCEFLOW_STORE`, `ONCEFLOW_DB`, `ONCEFLOW_QUEUE`, `ONCEFLOW_PG_URL`).
 * `--version` wins over everything, then `--help` (or `help <command>`). Pure: no I/O. Throws `CommandLineError` for anything malformed, including a flag the command does
 * not take, so a misspelt `--aply` can never turn into a silent dry run of something else.
 *
 * @example
 * parseCommandLine(['dead-letters', 'redrive', '--all', '--apply'], process.env);
 */
export function parseCommandLine(argv: readonly string[], env: Env): Invocation {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse([...argv]);
  } catch (err) {
    throw new CommandLineError((err as Error).message);
  }
  const { values, positionals, tokens } = parsed;
  const target: TargetSelection = {
    store: values.store ?? env.ONCEFLOW_STORE ?? 'embedded',
    to: values.to ?? values.store ?? env.ONCEFLOW_STORE ?? 'embedded',
    db: values.db ?? env.ONCEFLOW_DB ?? DEFAULT_DB,
    queue: values.queue ?? env.ONCEFLOW_QUEUE ?? DEFAULT_QUEUE,
    pgUrl: values['pg-url'] ?? env.ONCEFLOW_PG_URL,
  };
  if (values.version) return { command: { name: 'version' }, target };
  if (values.help || positionals[0] === 'help') {
    return { command: { name: 'help', topic: helpTopic(positionals) }, target };
  }
  if (positionals.length === 0) throw new CommandLineError('no command given');
  const { name, rest } = commandName(positionals);
  const allowed = new Set<string>([...TARGET_FLAGS, ...COMMAND_FLAGS[name]]);
  for (const token of tokens) {
    if (token.kind === 'option' && !allowed.has(token.name)) {
      throw new CommandLineError(`${name} does not take --${token.name}`);
    }
  }
  return { command: build(name, rest, values), target };
}
