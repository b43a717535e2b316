/**
 * The command line was wrong (unknown command or option, missing or malformed value, a store that
 * cannot serve the command). The binary prints the message with a hint to `--help` and exits
 * with code 2; nothing was touched. Not core's `UsageError`, which is a programming error in code.
 */
export class CommandLineError extends Error {
  override readonly name = 'CommandLineError';
}
