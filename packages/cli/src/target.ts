import type { Inbox, RecordStore, Transport } from '@onceflow/core';
import type { InboxBrowser } from './browser.js';

/** Environment variables, as `process.env` holds them. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * A record store once opened (`--store`): the event record every record and dead-letter command
 * reads, and the parts some stores add. A store without an inbox (or one that cannot list stored
 * envelopes) makes the commands needing it refuse with exit 2.
 */
export interface StoreTarget {
  readonly records: RecordStore;
  readonly inbox?: Inbox | undefined;
  readonly browser?: InboxBrowser | undefined;
  /** Releases connections and files. Called once, after the command, even when it failed. */
  close(): Promise<void>;
}

/** A transport once opened (`--to`), for the commands that publish: redrive and replay. */
export interface TransportTarget {
  readonly transport: Transport;
  /** Where it publishes, for people: `RabbitMQ queue "events"`. */
  readonly destination: string;
  /** Releases connections and files. Called once, after the command, even when it failed. */
  close(): Promise<void>;
}

/** What a store or transport is opened with: the target flags (or their variables), and the environment. */
export interface TargetOptions {
  /** `--db`: the embedded SQLite file. */
  readonly db: string;
  /** `--queue`: the queue to publish to (Kafka: the work topic). */
  readonly queue: string;
  /** `--pg-url`: the PostgreSQL connection string, when given. */
  readonly pgUrl?: string | undefined;
  /** For stores that read their own variables (`ONCEFLOW_AMQP_URL`, …). */
  readonly env: Env;
}

/**
 * Opens a record store: connects, checks it exists (never creates it). Called only for the store
 * a command names and only when the command needs it, so a client library is loaded only when
 * used (hence the dynamic imports).
 */
export type OpenStore = (options: TargetOptions) => Promise<StoreTarget>;

/** Opens a transport to publish to, checking its queue exists (never declaring it where it can tell). */
export type OpenTransport = (options: TargetOptions) => Promise<TransportTarget>;

/** Store name, as `--store` gives it, to how that store is opened. */
export type StoreRegistry = Readonly<Record<string, OpenStore>>;

/** Transport name, as `--to` gives it, to how that transport is opened. */
export type TransportRegistry = Readonly<Record<string, OpenTransport>>;
