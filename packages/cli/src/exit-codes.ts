/** What `runCli` returns and the binary exits with; `EXIT_CODES` documents the same table. */
export const EXIT = {
  /** Done, a dry run included. */
  ok: 0,
  /** Failed: a store or broker unreachable or missing, a publish that failed. */
  failed: 1,
  /**
   * The command line or the config file was wrong, or the store cannot serve the command;
   * nothing was touched.
   */
  usage: 2,
  /** No such record, or not in the state the command needs; nothing was touched. */
  notFound: 3,
} as const;

/** The exit-code table every `--help` ends with. */
export const EXIT_CODES = `Exit codes:
  0  done, a dry run included
  1  failed: a store or broker unreachable or missing (or its packages not installed), a
     publish that failed part-way (the output says how far it got)
  2  command-line or config-file error: an unknown command or flag, a missing or malformed
     value, a bad field in the config file, a store that cannot serve the command; nothing
     was touched
  3  not found: no record with that source and id, or not what the command needs (not a dead
     letter; for replay not completed, or no stored envelope); nothing was touched`;
