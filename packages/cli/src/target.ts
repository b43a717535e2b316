import type { Inbox, Transport } from '@onceflow/core';
import type { InboxBrowser } from './browser.js';

/** Environment variables, as `process.env` holds them. */
export type Env = Readonly<Record<string, string | undefined>>;

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

/** What a store is opened with: the target flags (or their variables), and the environment. */
export interface TargetOptions {
  /** `--db`: the embedded SQLite file. */
  readonly db: string;
  /** `--queue`: the queue (Kafka: the work topic). */
  readonly queue: string;
  /** `--pg-url`: the PostgreSQL connection string, when given. */
  readonly pgUrl?: string | undefined;
  /** For stores that read their own variables (`ONCEFLOW_AMQP_URL`, …). */
  readonly env: Env;
}

/**
 * Opens a store: connects, checks it exists, starts what it must. Called only for the store a
 * command names, so a store's client library is loaded only when used (hence the dynamic imports).
 */
export type OpenTarget = (options: TargetOptions) => Promise<Target>;

/** Store name, as `--store` and `--to` give it, to how that store is opened. */
export type TargetRegistry = Readonly<Record<string, OpenTarget>>;
