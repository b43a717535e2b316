import type { RedisClient } from './config.js';
import { CLAIM, MARK_ENQUEUED, MARK_PROCESSED, RELEASE } from './lua/claim.js';
import { COUNT, LIST_BATCH, READ } from './lua/listing.js';
import { PRUNE_BATCH, PURGE_BATCH, STATS, TAKE_STALE } from './lua/maintenance.js';
import { ACT, BEGIN, COMPLETE, DEAD_LETTER, EXTEND, SCHEDULE_RETRY } from './lua/records.js';

type Arg = string | number;
type Reply = (string | number)[];

/** The store's scripts as commands of the client (`EVALSHA`, falling back to `EVAL` once). */
export interface InboxCommands {
  claim(...args: Arg[]): Promise<string[]>;
  markEnqueued(...args: Arg[]): Promise<number>;
  markProcessed(...args: Arg[]): Promise<number>;
  release(...args: Arg[]): Promise<number>;
  begin(...args: Arg[]): Promise<Reply>;
  extend(...args: Arg[]): Promise<number>;
  complete(...args: Arg[]): Promise<number>;
  scheduleRetry(...args: Arg[]): Promise<number>;
  deadLetter(...args: Arg[]): Promise<number>;
  act(...args: Arg[]): Promise<number>;
  read(...args: Arg[]): Promise<(string | null)[]>;
  listBatch(...args: Arg[]): Promise<(string | number | null)[]>;
  /** Variable keys: the first argument is the number of keys. */
  count(...args: Arg[]): Promise<number>;
  takeStale(...args: Arg[]): Promise<string[]>;
  purgeBatch(...args: Arg[]): Promise<number[]>;
  pruneBatch(...args: Arg[]): Promise<number[]>;
  stats(...args: Arg[]): Promise<Reply>;
}

/** Script, number of keys (`undefined`: given per call). */
const SCRIPTS: Record<keyof InboxCommands, [string, number | undefined]> = {
  claim: [CLAIM, 4],
  markEnqueued: [MARK_ENQUEUED, 2],
  markProcessed: [MARK_PROCESSED, 4],
  release: [RELEASE, 5],
  begin: [BEGIN, 3],
  extend: [EXTEND, 2],
  complete: [COMPLETE, 5],
  scheduleRetry: [SCHEDULE_RETRY, 2],
  deadLetter: [DEAD_LETTER, 3],
  act: [ACT, 3],
  read: [READ, 2],
  listBatch: [LIST_BATCH, 1],
  count: [COUNT, undefined],
  takeStale: [TAKE_STALE, 1],
  purgeBatch: [PURGE_BATCH, 1],
  pruneBatch: [PRUNE_BATCH, 1],
  stats: [STATS, 4],
};

/**
 * Names on the client are versioned (`onceflowInboxV2Claim`), so two copies of this package with
 * different scripts never overwrite each other's commands. Defining them does no I/O, and
 * defining them again (another store on the same client) is harmless.
 */
export function defineInboxCommands(redis: RedisClient): InboxCommands {
  const commands: Partial<Record<keyof InboxCommands, (...args: Arg[]) => Promise<unknown>>> = {};
  for (const [name, [lua, numberOfKeys]] of Object.entries(SCRIPTS)) {
    const command = `onceflowInboxV2${name[0]?.toUpperCase()}${name.slice(1)}`;
    redis.defineCommand(command, numberOfKeys === undefined ? { lua } : { lua, numberOfKeys });
    const fn = (redis as unknown as Record<string, (...args: Arg[]) => Promise<unknown>>)[command];
    if (typeof fn !== 'function') throw new Error(`ioredis did not define ${command}`);
    commands[name as keyof InboxCommands] = fn.bind(redis);
  }
  return commands as unknown as InboxCommands;
}
