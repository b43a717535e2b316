// biome-ignore-all assist/source/organizeImports: exports are grouped by topic, as the style guide asks
// Running the CLI in-process
export { type CliIo, runCli } from './run.js';
export {
  type Command,
  type Env,
  type Invocation,
  parseCommandLine,
  type TargetSelection,
} from './args.js';
export { type Output, streamOutput } from './output.js';
export { UsageError } from './usage-error.js';

// Commands: each takes its stores and an output, returns an exit code
export {
  type ActOnDeadLettersOptions,
  type DeadLetterSelection,
  type ListDeadLettersOptions,
  listDeadLetters,
  purgeDeadLetters,
  redriveDeadLetters,
  showDeadLetter,
} from './commands/dead-letters.js';
export { type ReplayOptions, type ReplayStores, replayEvents } from './commands/replay.js';
export { inboxStats, type PurgeInboxOptions, purgeInbox } from './commands/inbox.js';

// Replay semantics
export {
  isReplayId,
  newReplayId,
  REPLAY_ID_HEADER,
  REPLAY_OF_HEADER,
  replayEnvelope,
} from './replay-envelope.js';

// Stores: targets and the optional inbox browser
export type { OpenTarget, Target, TargetOptions, TargetRegistry } from './target.js';
export { defaultTargets } from './targets.js';
export type {
  InboxBrowser,
  InboxPage,
  InboxQuery,
  StoredEvent,
  StoredEventState,
} from './browser.js';
export { createSqliteInboxBrowser, type SqliteReader } from './targets/sqlite-browser.js';
export { createPostgresInboxBrowser, type PgQueryable } from './targets/postgres-browser.js';
