// Running the CLI in-process: the `onceflow` binary is `runCli` wired to the process
export { type CliIo, runCli } from './run.js';
export { type Output, streamOutput } from './output.js';

// Stores a command line can name: the defaults, and what a store of your own returns
export { defaultTargets } from './targets.js';
export type { Env, OpenTarget, Target, TargetOptions, TargetRegistry } from './target.js';
export type {
  InboxBrowser,
  InboxPage,
  InboxQuery,
  StoredEvent,
  StoredEventState,
} from './browser.js';
