// Running the CLI in-process: the `onceflow` binary is `runCli` wired to the process
export { type CliIo, runCli } from './run.js';
export { type Output, streamOutput } from './output.js';
export { EXIT } from './exit-codes.js';

// The config file (onceflow.config.json, .mjs, .js or .ts): its type, for a typed .mjs or .ts
export { defineConfig, type OnceflowConfig } from './config.js';

// Record stores (--store) and transports (--to) a command line can name: the defaults, and what
// one of your own returns
export { defaultStores, defaultTransports } from './targets.js';
export type {
  Env,
  OpenStore,
  OpenTransport,
  StoreRegistry,
  StoreTarget,
  TargetOptions,
  TransportRegistry,
  TransportTarget,
} from './target.js';
export type { InboxBrowser, InboxPage, InboxQuery, StoredEvent } from './browser.js';
