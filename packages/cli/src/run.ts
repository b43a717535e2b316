import { type Command, type Invocation, parseCommandLine, type TargetSelection } from './args.js';
import {
  listDeadLetters,
  purgeDeadLetters,
  redriveDeadLetters,
  showDeadLetter,
} from './commands/dead-letters.js';
import { inboxStats, purgeInbox } from './commands/inbox.js';
import { replayEvents } from './commands/replay.js';
import type { Output } from './output.js';
import type { Env, Target, TargetRegistry } from './target.js';
import { defaultTargets } from './targets.js';
import { commandHelp } from './command-help.js';
import { USAGE } from './usage.js';
import { cliVersion } from './version.js';
import { CommandLineError } from './command-line-error.js';

/** Everything `runCli` reads and writes, so it runs without a process. */
export interface CliIo {
  /** Where results (`out`) and diagnostics (`err`) go. */
  readonly output: Output;
  /** Environment for the `ONCEFLOW_*` defaults. Default: none. */
  readonly env?: Env | undefined;
  /** The stores `--store`/`--to` can name. Default: `defaultTargets`. */
  readonly targets?: TargetRegistry | undefined;
}

function need<K extends 'inbox' | 'browser' | 'transport'>(
  target: Target,
  part: K,
  store: string,
  what: string,
): NonNullable<Target[K]> {
  const value = target[part];
  if (value === undefined || value === null) {
    throw new CommandLineError(`store "${store}" has no ${what}`);
  }
  return value as NonNullable<Target[K]>;
}

async function dispatch(
  command: Exclude<Command, { name: 'help' | 'version' }>,
  selection: TargetSelection,
  target: Target,
  openTo: () => Promise<Target>,
  output: Output,
): Promise<number> {
  const { store } = selection;
  const deadLetters = () =>
    need(target, 'transport', store, 'dead letters (it has no transport)').deadLetters;
  switch (command.name) {
    case 'dead-letters list':
      return listDeadLetters(deadLetters(), command, output);
    case 'dead-letters show':
      return showDeadLetter(deadLetters(), command.id, command, output);
    case 'dead-letters redrive':
      return redriveDeadLetters(deadLetters(), command, output);
    case 'dead-letters purge':
      return purgeDeadLetters(deadLetters(), command, output);
    case 'inbox stats':
      return inboxStats(need(target, 'inbox', store, 'inbox'), command, output);
    case 'inbox purge':
      return purgeInbox(need(target, 'inbox', store, 'inbox'), target.browser, command, output);
    case 'replay': {
      const browser = need(target, 'browser', store, 'inbox that can list stored events');
      const to = await openTo();
      const transport = need(to, 'transport', selection.to, 'transport to publish replays to');
      return replayEvents({ browser, transport }, command, output);
    }
  }
}

/**
 * Runs one command line and returns the exit code: 0 done (a dry run too), 1 failed, 2 a
 * command-line error (nothing touched). Everything goes through `io`, nothing touches `process`,
 * so it runs in tests as it does in the binary. The stores it opens are closed before it
 * returns, whatever happened.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), { output, env: process.env });
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const { output } = io;
  const targets = io.targets ?? defaultTargets;
  let invocation: Invocation;
  try {
    invocation = parseCommandLine(argv, io.env ?? {});
  } catch (err) {
    if (!(err instanceof CommandLineError)) throw err;
    if (argv.length === 0) output.err(USAGE);
    else output.err(`onceflow: ${err.message}\nRun "onceflow --help" for usage.`);
    return 2;
  }
  const { command, target: selection } = invocation;
  if (command.name === 'help') {
    output.out(command.topic === undefined ? USAGE : commandHelp(command.topic));
    return 0;
  }
  if (command.name === 'version') {
    output.out(cliVersion());
    return 0;
  }
  const opened: Target[] = [];
  const open = async (store: string): Promise<Target> => {
    const openTarget = targets[store];
    if (!openTarget) {
      const known = Object.keys(targets).join(', ');
      throw new CommandLineError(`unknown store "${store}" (known: ${known})`);
    }
    const target = await openTarget({ ...selection, env: io.env ?? {} });
    opened.push(target);
    return target;
  };
  try {
    const target = await open(selection.store);
    const openTo = () =>
      selection.to === selection.store ? Promise.resolve(target) : open(selection.to);
    return await dispatch(command, selection, target, openTo, output);
  } catch (err) {
    const usage = err instanceof CommandLineError;
    output.err(`onceflow: ${err instanceof Error ? err.message : String(err)}`);
    return usage ? 2 : 1;
  } finally {
    for (const target of opened.reverse()) {
      await target.close().catch((err: unknown) => output.err(`onceflow: closing: ${String(err)}`));
    }
  }
}
