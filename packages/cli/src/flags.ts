import type { ParseArgsConfig } from 'node:util';

/** Every flag the CLI knows; each command takes the target flags and its own (`COMMAND_FLAGS`). */
export const OPTIONS = {
  config: { type: 'string' },
  store: { type: 'string' },
  db: { type: 'string' },
  'pg-url': { type: 'string' },
  to: { type: 'string' },
  queue: { type: 'string' },
  state: { type: 'string' },
  source: { type: 'string' },
  type: { type: 'string' },
  reason: { type: 'string' },
  'older-than': { type: 'string' },
  'newer-than': { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  rate: { type: 'string' },
  actor: { type: 'string' },
  apply: { type: 'boolean' },
  json: { type: 'boolean' },
  schema: { type: 'boolean' },
  since: { type: 'string' },
  until: { type: 'string' },
  'replay-id': { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'base-path': { type: 'string' },
  write: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

export type Flag = keyof typeof OPTIONS;

/** Flags every command takes: the config file, where the record store is, and help. */
export const TARGET_FLAGS: readonly Flag[] = ['config', 'store', 'db', 'pg-url', 'help'];

const FILTER = ['source', 'type', 'reason', 'older-than', 'newer-than'] as const;
const PAGE = ['limit', 'cursor', 'json'] as const;
/** The transport a command publishes through, and where. */
const PUBLISH = ['to', 'queue'] as const;
const ACT = ['all', 'limit', 'rate', 'actor', 'apply', 'json'] as const;

/** The flags each command accepts besides the target flags. */
export const COMMAND_FLAGS = {
  'events show': ['json'],
  'events list': ['state', ...FILTER, ...PAGE],
  'dead-letters list': [...FILTER, ...PAGE],
  'dead-letters show': ['json'],
  'dead-letters redrive': [...FILTER, ...ACT, ...PUBLISH],
  'dead-letters purge': [...FILTER, ...ACT],
  replay: [
    'since',
    'until',
    'source',
    'type',
    'limit',
    'rate',
    'replay-id',
    ...PUBLISH,
    'apply',
    'json',
  ],
  'inbox stats': ['json'],
  config: ['to', 'queue', 'schema', 'json'],
  'inbox purge': ['older-than', 'apply', 'json'],
  console: ['port', 'host', 'base-path', 'write', ...PUBLISH, 'json'],
} as const satisfies Record<string, readonly Flag[]>;

export type CommandName = keyof typeof COMMAND_FLAGS;

/** The command groups: `onceflow <group> <command>`. */
export const GROUPS = ['events', 'dead-letters', 'inbox'] as const;
export type Group = (typeof GROUPS)[number];
