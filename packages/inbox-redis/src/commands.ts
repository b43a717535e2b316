import type { RedisClient } from './config.js';
import { CLAIM, MARK_ENQUEUED, RELEASE } from './lua/claim.js';
import { PURGE_BATCH, STATS, TAKE_STALE } from './lua/maintenance.js';
import { BEGIN, COMPLETE, EXTEND } from './lua/processed.js';

type Arg = string | number;
type Reply = (string | number)[];

/** The store's scripts as commands of the client (`EVALSHA`, falling back to `EVAL` once). */
export interface InboxCommands {
  claim(...args: Arg[]): Promise<string[]>;
  markEnqueued(...args: Arg[]): Promise<number>;
  release(...args: Arg[]): Promise<number>;
  begin(...args: Arg[]): Promise<Reply>;
  extend(...args: Arg[]): Promise<number>;
  complete(...args: Arg[]): Promise<number>;
  takeStale(...args: Arg[]): Promise<string[]>;
  purgeBatch(...args: Arg[]): Promise<number[]>;
  stats(...args: Arg[]): Promise<Reply>;
}

/** Script, number of keys. */
const SCRIPTS: Record<keyof InboxCommands, [string, number]> = {
  claim: [CLAIM, 4],
  markEnqueued: [MARK_ENQUEUED, 3],
  release: [RELEASE, 5],
  begin: [BEGIN, 2],
  extend: [EXTEND, 2],
  complete: [COMPLETE, 6],
  takeStale: [TAKE_STALE, 1],
  purgeBatch: [PURGE_BATCH, 1],
  stats: [STATS, 4],
};

/**
 * Names on the client are versioned (`onceflowInboxV1Claim`), so two copies of this package with
 * different scripts never overwrite each other's commands. Defining them does no I/O, and
 * defining them again (another store on the same client) is harmless.
 */
export function defineInboxCommands(redis: RedisClient): InboxCommands {
  const commands: Partial<Record<keyof InboxCommands, (...args: Arg[]) => Promise<unknown>>> = {};
  for (const [name, [lua, numberOfKeys]] of Object.entries(SCRIPTS)) {
    const command = `onceflowInboxV1${name[0]?.toUpperCase()}${name.slice(1)}`;
    redis.defineCommand(command, { lua, numberOfKeys });
    const fn = (redis as unknown as Record<string, (...args: Arg[]) => Promise<unknown>>)[command];
    if (typeof fn !== 'function') throw new Error(`ioredis did not define ${command}`);
    commands[name as keyof InboxCommands] = fn.bind(redis);
  }
  return commands as unknown as InboxCommands;
}
