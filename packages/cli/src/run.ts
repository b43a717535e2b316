import {
  type Command,
  earlyFlags,
  type Invocation,
  parseCommandLine,
  type TargetSelection,
} from './args.js';
import { CommandLineError } from './command-line-error.js';
import { commandHelp } from './command-help.js';
import { purgeCommand, redriveCommand } from './commands/dead-letter-actions.js';
import { listDeadLetters, showDeadLetter } from './commands/dead-letters.js';
import { listEvents, showEvent } from './commands/events.js';
import { inboxStats, purgeInbox } from './commands/inbox.js';
import { replayEvents } from './commands/replay.js';
import { serveConsole } from './commands/console.js';
import { configJsonSchema, type OnceflowConfig, withConfig } from './config.js';
import { type LoadedConfig, loadConfig } from './config-file.js';
import { showConfig } from './commands/config.js';
import { EXIT } from './exit-codes.js';
import { type Output, printJson, toneErr } from './output.js';
import type {
  Env,
  StoreRegistry,
  StoreTarget,
  TransportRegistry,
  TransportTarget,
} from './target.js';
import { defaultStores, defaultTransports } from './targets.js';
import { USAGE } from './usage.js';
import { cliVersion } from './version.js';

/** Everything `runCli` reads and writes, so it runs without a process. */
export interface CliIo {
  /** Where results (`out`) and diagnostics (`err`) go. */
  readonly output: Output;
  /** Environment for the `ONCEFLOW_*` defaults. Default: none. */
  readonly env?: Env | undefined;
  /** Where `onceflow.config.*` is looked for and `--config` is relative to. Default: `process.cwd()`. */
  readonly cwd?: string | undefined;
  /** The record stores `--store` can name. Default: `defaultStores`. */
  readonly stores?: StoreRegistry | undefined;
  /** The transports `--to` can name. Default: `defaultTransports`. */
  readonly transports?: TransportRegistry | undefined;
  /** Stops `onceflow console`. Default: aborted by the process's first SIGINT or SIGTERM. */
  readonly signal?: AbortSignal | undefined;
}

/** Aborted by the first SIGINT or SIGTERM: what stops a long-running command in the binary. */
function processSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  controller.signal.addEventListener('abort', () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  });
  return controller.signal;
}

/** Opens what a command needs, each at most once and only when first asked for. */
interface Opener {
  store(): Promise<StoreTarget>;
  transport(): Promise<TransportTarget>;
}

function need<K extends 'inbox' | 'browser'>(
  target: StoreTarget,
  part: K,
  store: string,
  what: string,
): NonNullable<StoreTarget[K]> {
  const value = target[part];
  if (value === undefined || value === null) {
    throw new CommandLineError(`store "${store}" has no ${what}`);
  }
  return value as NonNullable<StoreTarget[K]>;
}

async function dispatch(
  command: Exclude<Command, { name: 'help' | 'version' | 'config' }>,
  selection: TargetSelection,
  open: Opener,
  output: Output,
  signal: () => AbortSignal,
): Promise<number> {
  const { store } = selection;
  const records = async () => (await open.store()).records;
  const plannedDestination = selection.to && `${selection.to} queue "${selection.queue}"`;
  switch (command.name) {
    case 'events show':
      return showEvent(await records(), command, output);
    case 'events list':
      return listEvents(await records(), command, output);
    case 'dead-letters list':
      return listDeadLetters(await records(), command, output);
    case 'dead-letters show':
      return showDeadLetter(await records(), command, output);
    case 'dead-letters redrive': {
      const stores = {
        records: await records(),
        plannedDestination,
        openTransport: open.transport,
      };
      return redriveCommand(stores, command, output);
    }
    case 'dead-letters purge':
      return purgeCommand(await records(), command, output);
    case 'inbox stats':
      return inboxStats(need(await open.store(), 'inbox', store, 'inbox'), command, output);
    case 'inbox purge': {
      const target = await open.store();
      return purgeInbox(need(target, 'inbox', store, 'inbox'), target.browser, command, output);
    }
    case 'console': {
      const transport = selection.to === undefined ? undefined : (await open.transport()).transport;
      const target = await open.store();
      const stores = { records: target.records, inbox: target.inbox ?? undefined, transport };
      return serveConsole(stores, command, output, signal());
    }
    case 'replay': {
      const target = await open.store();
      const stores = { plannedDestination, openTransport: open.transport };
      if (command.ids !== undefined)
        return replayEvents({ ...stores, records: target.records }, command, output);
      const browser = need(target, 'browser', store, 'inbox that can list stored events');
      return replayEvents({ ...stores, browser }, command, output);
    }
  }
}

/** The config file's store and transport must be ones the registries know. */
function checkNames(
  path: string,
  config: OnceflowConfig,
  stores: StoreRegistry,
  transports: TransportRegistry,
) {
  const check = (field: 'store' | 'to', registry: Readonly<Record<string, unknown>>) => {
    const name = config[field];
    if (name !== undefined && !Object.hasOwn(registry, name))
      throw new CommandLineError(
        `${path}: ${field}: unknown ${field === 'store' ? 'store' : 'transport'} "${name}" (known: ${Object.keys(registry).join(', ')})`,
      );
  };
  check('store', stores);
  check('to', transports);
}

/** Reads the config file unless the command line only asks for help or the version. */
async function configured(
  argv: readonly string[],
  io: CliIo,
  env: Env,
): Promise<LoadedConfig & { env: Env; defaults: NonNullable<OnceflowConfig['defaults']> }> {
  const early = earlyFlags(argv, env);
  const none = { path: undefined, config: {}, env, defaults: {} };
  if (early.skipsConfig) return none;
  const { path, config } = await loadConfig(io.cwd ?? process.cwd(), early.config);
  if (path === undefined) return none;
  checkNames(path, config, io.stores ?? defaultStores, io.transports ?? defaultTransports);
  return { path, config, env: withConfig(env, config), defaults: config.defaults ?? {} };
}

/**
 * Runs one command line and returns the exit code (`EXIT`): 0 done (a dry run too), 1 failed,
 * 2 a command-line or config-file error, 3 not found (nothing touched in either). Settings come
 * from the flags, then the environment, then the config file (`onceflow.config.*` in `io.cwd`,
 * or `--config`), then the defaults. Everything goes through `io`; nothing touches `process` but
 * the default `cwd`, so it runs in tests as it does in the binary. It opens the record store only
 * for a command that reads it and the transport only when about to publish, and closes both
 * before it returns, whatever happened.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), { output, env: process.env });
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const { output } = io;
  let env = io.env ?? {};
  let invocation: Invocation;
  let loaded: LoadedConfig = { path: undefined, config: {} };
  try {
    const settings = await configured(argv, io, env);
    env = settings.env;
    loaded = { path: settings.path, config: settings.config };
    invocation = parseCommandLine(argv, env, new Date(), settings.defaults);
  } catch (err) {
    if (!(err instanceof CommandLineError)) throw err;
    if (argv.length === 0) output.err(USAGE);
    else
      output.err(
        `${toneErr(output, 'error', `onceflow: ${err.message}`)}\nRun "onceflow --help" for usage.`,
      );
    return EXIT.usage;
  }
  const { command, target: selection } = invocation;
  if (command.name === 'help') {
    output.out(command.topic === undefined ? USAGE : commandHelp(command.topic));
    return EXIT.ok;
  }
  if (command.name === 'version') {
    if (command.json) printJson(output, { name: '@onceflow/cli', version: cliVersion() });
    else output.out(cliVersion());
    return EXIT.ok;
  }
  if (command.name === 'config' && command.schema) {
    printJson(output, configJsonSchema());
    return EXIT.ok;
  }
  if (command.name === 'config') {
    const cwd = io.cwd ?? process.cwd();
    const input = { argv, env: io.env ?? {}, ...loaded, cwd, json: command.json };
    return showConfig(input, output);
  }
  const options = { ...selection, env };
  const opened: { close(): Promise<void> }[] = [];
  const once = <T extends { close(): Promise<void> }>(
    registry: Readonly<Record<string, (o: typeof options) => Promise<T>>>,
    name: string | undefined,
    flag: '--store' | '--to',
  ) => {
    let pending: Promise<T> | undefined;
    return () => {
      pending ??= (async () => {
        if (name === undefined)
          throw new CommandLineError(
            `${command.name} --apply needs ${flag} (one of: ${Object.keys(registry).join(', ')})`,
          );
        const openTarget = registry[name];
        if (!openTarget) {
          const known = Object.keys(registry).join(', ');
          const noun = flag === '--store' ? 'store' : 'transport';
          throw new CommandLineError(`unknown ${noun} "${name}" (known: ${known})`);
        }
        const target = await openTarget(options);
        opened.push(target);
        return target;
      })();
      return pending;
    };
  };
  const open: Opener = {
    store: once(io.stores ?? defaultStores, selection.store, '--store'),
    transport: once(io.transports ?? defaultTransports, selection.to, '--to'),
  };
  try {
    return await dispatch(command, selection, open, output, () => io.signal ?? processSignal());
  } catch (err) {
    output.err(
      toneErr(output, 'error', `onceflow: ${err instanceof Error ? err.message : String(err)}`),
    );
    return err instanceof CommandLineError ? EXIT.usage : EXIT.failed;
  } finally {
    for (const target of opened.reverse()) {
      await target.close().catch((err: unknown) => output.err(`onceflow: closing: ${String(err)}`));
    }
  }
}
