import { parseArgs } from 'node:util';
import {
  type DeadLetterSelection,
  RECORD_PAGE_LIMIT,
  type RecordFilter,
  isReplayId,
} from '@onceflow/core';
import { CommandLineError } from './command-line-error.js';
import type { ReplayOptions } from './commands/replay.js';
import type { OnceflowConfig } from './config.js';
import { parseDuration, parseWhen } from './duration.js';
import {
  COMMAND_FLAGS,
  type CommandName,
  GROUPS,
  type Group,
  OPTIONS,
  TARGET_FLAGS,
} from './flags.js';
import {
  parseActor,
  parseCursor,
  parseFilter,
  parseRate,
  parseRecordId,
  parseSelection,
} from './record-args.js';
import type { Env, TargetOptions } from './target.js';

export { COMMAND_FLAGS, type CommandName } from './flags.js';

const parse = (args: string[]) =>
  parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });

type Values = ReturnType<typeof parse>['values'];

/** What `--help` can be about: one command, a group of them, or (undefined) everything. */
export type HelpTopic = CommandName | Group;

/** A record listing: which records, and which page. */
export interface ListCommand {
  readonly filter: RecordFilter;
  /** Page size. Default 50. */
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly json: boolean;
}

/** A parsed command, ready to run. */
export type Command =
  | { readonly name: 'help'; readonly topic?: HelpTopic | undefined }
  | { readonly name: 'version'; readonly json: boolean }
  | {
      readonly name: 'events show' | 'dead-letters show';
      readonly source: string;
      readonly id: string;
      readonly json: boolean;
    }
  | ({ readonly name: 'events list' | 'dead-letters list' } & ListCommand)
  | {
      readonly name: 'dead-letters redrive' | 'dead-letters purge';
      readonly select: DeadLetterSelection;
      readonly actor: string;
      /** Most records acted on per second. */
      readonly rate?: number | undefined;
      readonly apply: boolean;
      readonly json: boolean;
    }
  | ({ readonly name: 'replay'; readonly apply: boolean; readonly json: boolean } & Omit<
      ReplayOptions,
      'apply' | 'json' | 'batchSize' | 'progressIntervalMs'
    >)
  | { readonly name: 'inbox stats'; readonly json: boolean }
  | { readonly name: 'config'; readonly json: boolean; readonly schema: boolean }
  | {
      readonly name: 'console';
      readonly port: number;
      readonly host: string;
      readonly basePath: string;
      readonly write: boolean;
      /** `ONCEFLOW_CONSOLE_TOKEN`: never a flag (it would show in `ps`) nor the config file. */
      readonly token: string | undefined;
      readonly json: boolean;
    }
  | {
      readonly name: 'inbox purge';
      readonly olderThanMs: number;
      readonly apply: boolean;
      readonly json: boolean;
    };

/** Where a command reads and publishes, and what the stores are opened with. */
export interface TargetSelection extends Omit<TargetOptions, 'env'> {
  /** `--store`: the record store. */
  readonly store: string;
  /** `--to`: the transport redrive and replay publish through; undefined when not given. */
  readonly to?: string | undefined;
}

export interface Invocation {
  readonly command: Command;
  readonly target: TargetSelection;
}

export const DEFAULT_DB = '.onceflow/onceflow.db';
export const DEFAULT_QUEUE = 'events';
/** Where `onceflow console` listens unless `--port` says otherwise. */
export const DEFAULT_CONSOLE_PORT = 8088;
/** Rows a listing prints unless `--limit` says otherwise. */
export const DEFAULT_PAGE = 50;

function positiveInt(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(text))
    throw new CommandLineError(`--${flag}: expected a positive integer, got "${text}"`);
  return Number(text);
}

const isGroup = (word: string | undefined): word is Group => GROUPS.some((group) => group === word);

function commandName(positionals: readonly string[]): { name: CommandName; rest: string[] } {
  const [group, sub, ...rest] = positionals;
  if (group === 'replay' || group === 'config' || group === 'console')
    return { name: group, rest: positionals.slice(1) };
  const name = `${group} ${sub ?? ''}`.trim();
  if (Object.hasOwn(COMMAND_FLAGS, name)) return { name: name as CommandName, rest };
  if (isGroup(group)) {
    throw new CommandLineError(sub ? `unknown command "${name}"` : `"${group}" needs a subcommand`);
  }
  throw new CommandLineError(`unknown command "${group}"`);
}

/** `help replay`, `replay --help`, `dead-letters --help`: the command the help is about. */
function helpTopic(positionals: readonly string[]): HelpTopic | undefined {
  const words = positionals[0] === 'help' ? positionals.slice(1) : positionals;
  const [group, sub] = words;
  if (group === undefined) return undefined;
  if (isGroup(group) && sub === undefined) return group;
  return commandName(words).name;
}

/** What the config file's `defaults` give the commands, flags winning. */
export type CommandDefaults = NonNullable<OnceflowConfig['defaults']>;

function build(
  name: CommandName,
  rest: readonly string[],
  v: Values,
  now: Date,
  defaults: CommandDefaults,
  env: Env,
): Command {
  const json = v.json === true;
  const rate = parseRate(v.rate) ?? defaults.rate;
  const apply = v.apply === true;
  const noArgs = () => {
    if (rest.length > 0) throw new CommandLineError(`${name}: unexpected argument "${rest[0]}"`);
  };
  switch (name) {
    case 'events show':
    case 'dead-letters show': {
      const [source, id, extra] = rest;
      if (source === undefined || id === undefined) {
        // `show stripe/evt_1` reads as well as `show stripe evt_1`.
        if (source?.includes('/') && id === undefined)
          return { name, ...parseRecordId(source), json };
        throw new CommandLineError(`${name}: give the source and id, e.g. "${name} stripe evt_1"`);
      }
      if (extra !== undefined)
        throw new CommandLineError(`${name}: unexpected argument "${extra}"`);
      return { name, source, id, json };
    }
    case 'events list':
    case 'dead-letters list': {
      noArgs();
      const limit = positiveInt(v.limit, 'limit') ?? DEFAULT_PAGE;
      if (limit > RECORD_PAGE_LIMIT)
        throw new CommandLineError(`--limit: at most ${RECORD_PAGE_LIMIT} per page`);
      return { name, filter: parseFilter(v, now), limit, cursor: parseCursor(v.cursor), json };
    }
    case 'dead-letters redrive':
    case 'dead-letters purge': {
      const limit = positiveInt(v.limit, 'limit');
      const select = parseSelection(name, rest, parseFilter(v, now), v.all === true, limit);
      const actor = parseActor(v.actor ?? defaults.actor);
      return { name, select, actor, rate, apply, json };
    }
    case 'replay': {
      const replayId = v['replay-id'];
      if (replayId !== undefined && !isReplayId(replayId)) {
        throw new CommandLineError('--replay-id: 1 to 64 characters of A-Z a-z 0-9 . _ -');
      }
      if (rest.length > 0) {
        const window = (['since', 'until', 'source', 'type', 'limit'] as const).find(
          (flag) => v[flag] !== undefined,
        );
        if (window !== undefined)
          throw new CommandLineError(
            `replay: give <source>/<id>... or a window (--since), not --${window} too`,
          );
        const ids = [...new Map(rest.map((p) => [p, parseRecordId(p)])).values()];
        return { name, ids, rate, replayId, apply, json };
      }
      if (v.since === undefined)
        throw new CommandLineError(
          'replay: --since is required (or name events: replay <source>/<id>...)',
        );
      const since = parseWhen(v.since, '--since', now);
      const until = v.until === undefined ? undefined : parseWhen(v.until, '--until', now);
      if (until && until <= since)
        throw new CommandLineError('replay: --until must be after --since');
      const limit = positiveInt(v.limit, 'limit');
      const window = { since, until, source: v.source, type: v.type, limit };
      return { name, ...window, rate, replayId, apply, json };
    }
    case 'inbox stats':
      noArgs();
      return { name, json };
    case 'config':
      noArgs();
      return { name, json, schema: v.schema === true };
    case 'console': {
      noArgs();
      const portText = v.port ?? env.ONCEFLOW_CONSOLE_PORT;
      // 0 asks the system for a free port (printed once listening).
      if (portText !== undefined && (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535))
        throw new CommandLineError(`--port: expected 0 to 65535, got "${portText}"`);
      const port = portText === undefined ? DEFAULT_CONSOLE_PORT : Number(portText);
      const writeText = env.ONCEFLOW_CONSOLE_WRITE;
      if (writeText !== undefined && writeText !== 'true' && writeText !== 'false')
        throw new CommandLineError(`ONCEFLOW_CONSOLE_WRITE: true or false, got "${writeText}"`);
      return {
        name,
        port,
        host: v.host ?? env.ONCEFLOW_CONSOLE_HOST ?? '127.0.0.1',
        basePath: v['base-path'] ?? env.ONCEFLOW_CONSOLE_BASE_PATH ?? '/',
        write: v.write === true || writeText === 'true',
        token: env.ONCEFLOW_CONSOLE_TOKEN,
        json,
      };
    }
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
 * environment defaults (`ONCEFLOW_STORE`, `ONCEFLOW_DB`, `ONCEFLOW_PG_URL`, `ONCEFLOW_TO`,
 * `ONCEFLOW_QUEUE`). `--to` defaults to `embedded` when the store is embedded, and is otherwise
 * undefined (a command that must publish then asks for it). Ages (`--older-than`) are measured
 * from `now`. `--version` wins over everything, then `--help` (or `help <command>`). No I/O.
 * Throws `CommandLineError` for anything malformed, including a flag the command does not take,
 * so a misspelt `--aply` can never turn into a silent dry run of something else.
 *
 * @example
 * parseCommandLine(['dead-letters', 'redrive', '--source', 'stripe', '--apply'], process.env);
 */
export function parseCommandLine(
  argv: readonly string[],
  env: Env,
  now: Date = new Date(),
  defaults: CommandDefaults = {},
): Invocation {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse([...argv]);
  } catch (err) {
    throw new CommandLineError((err as Error).message);
  }
  const { values, positionals, tokens } = parsed;
  const store = values.store ?? env.ONCEFLOW_STORE ?? 'embedded';
  const target: TargetSelection = {
    store,
    to: values.to ?? env.ONCEFLOW_TO ?? (store === 'embedded' ? 'embedded' : undefined),
    db: values.db ?? env.ONCEFLOW_DB ?? DEFAULT_DB,
    queue: values.queue ?? env.ONCEFLOW_QUEUE ?? DEFAULT_QUEUE,
    pgUrl: values['pg-url'] ?? env.ONCEFLOW_PG_URL,
  };
  if (values.version) return { command: { name: 'version', json: values.json === true }, target };
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
  return { command: build(name, rest, values, now, defaults, env), target };
}

/** What `runCli` needs before it reads the config file: whether to, and which file. */
export interface EarlyFlags {
  /** `--help`, `help …`, `--version`, `config --schema`: answered without reading the file. */
  readonly skipsConfig: boolean;
  /** `--config`, else `ONCEFLOW_CONFIG`. */
  readonly config: string | undefined;
}

/** A lenient first look at the command line (errors are left to `parseCommandLine`). */
export function earlyFlags(argv: readonly string[], env: Env): EarlyFlags {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
  });
  const config = typeof values.config === 'string' ? values.config : env.ONCEFLOW_CONFIG;
  const skipsConfig =
    values.help === true ||
    values.version === true ||
    positionals[0] === 'help' ||
    (positionals[0] === 'config' && values.schema === true);
  return { skipsConfig, config };
}
