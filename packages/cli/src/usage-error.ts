/**
 * The command line was wrong (unknown command or option, missing or malformed value). The
 * binary prints the message with a hint to `--help` and exits with code 2; nothing was touched.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
