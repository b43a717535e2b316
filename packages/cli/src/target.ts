import type { Inbox, Transport } from '@onceflow/core';
import type { Env, TargetSelection } from './args.js';
import type { InboxBrowser } from './browser.js';

/**
 * What a store offers the CLI once opened. Each part is optional: an inbox-only store (PostgreSQL)
 * has no transport, a broker has no inbox; commands that need a missing part refuse with exit 2.
 */
export interface Target {
  readonly inbox?: Inbox | undefined;
  readonly browser?: InboxBrowser | undefined;
  readonly transport?: Transport | undefined;
  /** Releases connections and files. Called once, after the command, even when it failed. */
  close(): Promise<void>;
}

/** The selection flags plus the environment, for stores that read their own variables. */
export interface TargetOptions extends Omit<TargetSelection, 'store' | 'to'> {
  readonly env: Env;
}

/**
 * Opens a store: connects, checks it exists, starts what it must. Called only for the store a
 * command names, so a store's client library is loaded only when used (hence the dynamic imports).
 */
export type OpenTarget = (options: TargetOptions) => Promise<Target>;

export type TargetRegistry = Readonly<Record<string, OpenTarget>>;
