import { type Command, type Invocation, parseCommandLine, type TargetSelection } from './args.js';
import { CommandLineError } from './command-line-error.js';
import { commandHelp } from './command-help.js';
import { purgeCommand, redriveCommand } from './commands/dead-letter-actions.js';
import { listDeadLetters, showDeadLetter } from './commands/dead-letters.js';
import { listEvents, showEvent } from './commands/events.js';
import { inboxStats, purgeInbox } from './commands/inbox.js';
import { replayEvents } from './commands/replay.js';
import { EXIT } from './exit-codes.js';
import type { Output } from './output.js';
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
  /** The record stores `--store` can name. Default: `defaultStores`. */
  readonly stores?: StoreRegistry | undefined;
  /** The transports `--to` can name. Default: `defaultTransports`. */
  readonly transports?: TransportRegistry | undefined;
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
  command: Exclude<Command, { name: 'help' | 'version' }>,
  selection: TargetSelection,
  open: Opener,
  output: Output,
): Promise<number> {
  const { store } = selection;
  const records = async () => (await open.store()).records;
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
      const plannedDestination = selection.to && `${selection.to} queue "${selection.queue}"`;
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
    case 'replay': {
      const what = 'inbox that can list stored events';
      const browser = need(await open.store(), 'browser', store, what);
      return replayEvents({ browser, openTransport: open.transport }, command, output);
    }
  }
}

/**
 * Runs one command line and returns the exit code (`EXIT`): 0 done (a dry run too), 1 failed,
 * 2 a command-line error, 3 not found (nothing touched in either). Everything goes through `io`,
 * nothing touches `process`, so it runs in tests as it does in the binary. It opens the record
 * store only for a command that reads it and the transport only when about to publish, and
 * closes both before it returns, whatever happened.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), { output, env: process.env });
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const { output } = io;
  const env = io.env ?? {};
  let invocation: Invocation;
  try {
    invocation = parseCommandLine(argv, env);
  } catch (err) {
    if (!(err instanceof CommandLineError)) throw err;
    if (argv.length === 0) output.err(USAGE);
    else output.err(`onceflow: ${err.message}\nRun "onceflow --help" for usage.`);
    return EXIT.usage;
  }
  const { command, target: selection } = invocation;
  if (command.name === 'help') {
    output.out(command.topic === undefined ? USAGE : commandHelp(command.topic));
    return EXIT.ok;
  }
  if (command.name === 'version') {
    output.out(cliVersion());
    return EXIT.ok;
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
    return await dispatch(command, selection, open, output);
  } catch (err) {
    output.err(`onceflow: ${err instanceof Error ? err.message : String(err)}`);
    return err instanceof CommandLineError ? EXIT.usage : EXIT.failed;
  } finally {
    for (const target of opened.reverse()) {
      await target.close().catch((err: unknown) => output.err(`onceflow: closing: ${String(err)}`));
    }
  }
}
