import { randomUUID } from 'node:crypto';
import type { ClaimResult, Inbox, InboxOutcomes, InboxStats, StaleClaim } from '@onceflow/core';
import {
  decodeEnvelope,
  encodeEnvelope,
  nonNegative,
  positiveMs,
  traceIdOf,
} from '@onceflow/core/kit';
import type { Call } from './call.js';
import type { InboxCommands } from './commands.js';
import type { ResolvedRedisInboxConfig } from './config.js';
import type { InboxKeys } from './keys.js';
import { STATE_LETTERS } from './lua/row.js';

/** States whose rows expire `retentionMs` after their last change: their indexes are pruned. */
const EXPIRING = [
  STATE_LETTERS.enqueued,
  STATE_LETTERS.processing,
  STATE_LETTERS['retry-scheduled'],
  STATE_LETTERS.completed,
  STATE_LETTERS.discarded,
] as const;

/** Pending rows one `takeStale` looks at, at most, beyond the ones it takes. */
const STALE_SCAN_CAP = 1000;
/** Expired index entries one `stats` call clears, at most. */
const STATS_PRUNE_CAP = 1000;

/** The envelope's receivedAt in epoch ms, or now when it does not parse. */
function receivedAtMs(receivedAt: string): number {
  const at = Date.parse(receivedAt);
  return Number.isNaN(at) ? Date.now() : at;
}

type Deps = {
  readonly call: Call;
  readonly scripts: InboxCommands;
  readonly keys: InboxKeys;
  readonly config: ResolvedRedisInboxConfig;
};

function claimResult(reply: string[], token: string): ClaimResult {
  const [status, existingHash] = reply;
  switch (status) {
    case 'new':
    case 'stale-pending':
      return { status, token };
    case 'in-flight':
    case 'duplicate':
      return { status };
    case 'conflict':
      return { status, existingHash: existingHash ?? '' };
    default:
      throw new Error(`unexpected claim reply ${JSON.stringify(reply)}`);
  }
}

/**
 * The receiver-side half of the store (`release` lives with the store: it serves both halves).
 * Every method is one script or one command, atomic in Redis, safe to call from any number of
 * processes at once.
 */
export function createInboxMethods({
  call,
  scripts,
  keys,
  config,
}: Deps): Omit<Inbox, 'release'> & InboxOutcomes {
  const { redis, retentionMs, purgeBatchSize } = config;

  /**
   * Runs `batch(offset)` until a batch comes back short or `signal` aborts (checked before each
   * batch); returns the sum of the first counts.
   */
  const inBatches = async (
    batch: (offset: number) => Promise<number[]>,
    signal: AbortSignal | undefined,
  ) => {
    let total = 0;
    let offset = 0;
    while (signal?.aborted !== true) {
      const [gone = 0, looked = 0, kept = 0] = await call('purge', () => batch(offset));
      total += gone;
      offset += kept;
      if (looked < purgeBatchSize) break;
    }
    return total;
  };
  const purgeIndex = (
    index: string,
    which: 'open' | 'done',
    cutoff: number,
    signal: AbortSignal | undefined,
  ) =>
    inBatches(
      (offset) => scripts.purgeBatch(index, keys.base, cutoff, purgeBatchSize, offset, which),
      signal,
    );
  /** Drops state index entries that rows which expired left behind. */
  const pruneStateIndexes = async (signal: AbortSignal | undefined) => {
    for (const letter of EXPIRING) {
      await inBatches(
        (offset) =>
          scripts.pruneBatch(
            keys.stateIndex(letter),
            keys.base,
            letter,
            retentionMs,
            purgeBatchSize,
            offset,
          ),
        signal,
      );
    }
  };

  return {
    async claim(envelope, { leaseMs }) {
      const lease = Math.ceil(positiveMs('leaseMs', leaseMs));
      const member = keys.member(envelope.source, envelope.id);
      const token = randomUUID();
      const reply = await call('claim', () =>
        scripts.claim(
          keys.row(member),
          keys.claimLease(member),
          keys.pending,
          keys.open,
          member,
          envelope.payloadHash,
          token,
          lease,
          encodeEnvelope(envelope),
          receivedAtMs(envelope.receivedAt),
          keys.base,
          retentionMs,
          envelope.type,
          envelope.key ?? '',
          traceIdOf(envelope) ?? '',
        ),
      );
      return claimResult(reply, token);
    },

    async markEnqueued(source, id, token) {
      const member = keys.member(source, id);
      await call('markEnqueued', () =>
        scripts.markEnqueued(
          keys.row(member),
          keys.claimLease(member),
          member,
          token,
          retentionMs,
          keys.base,
        ),
      );
    },

    async markProcessed(source, id) {
      const member = keys.member(source, id);
      await call('markProcessed', () =>
        scripts.markProcessed(
          keys.row(member),
          keys.claimLease(member),
          keys.open,
          keys.done,
          member,
          retentionMs,
          keys.base,
        ),
      );
    },

    async takeStale({ olderThanMs, leaseMs, limit }): Promise<StaleClaim[]> {
      const lease = Math.ceil(positiveMs('leaseMs', leaseMs));
      const older = Math.floor(nonNegative('olderThanMs', olderThanMs));
      const max = Math.floor(nonNegative('limit', limit));
      if (max === 0) return [];
      const tokenPrefix = `${randomUUID()}:`;
      const reply = await call('takeStale', () =>
        scripts.takeStale(
          keys.pending,
          keys.base,
          older,
          lease,
          max,
          tokenPrefix,
          max + STALE_SCAN_CAP,
        ),
      );
      const taken: StaleClaim[] = [];
      for (let i = 0; i + 1 < reply.length; i += 2) {
        taken.push({ envelope: decodeEnvelope(reply[i] ?? ''), token: reply[i + 1] ?? '' });
      }
      return taken;
    },

    async recordConflict(envelope) {
      const { source, id, payloadHash } = envelope;
      await call('recordConflict', () =>
        redis.xadd(
          keys.conflicts,
          '*',
          'source',
          source,
          'id',
          id,
          'payloadHash',
          payloadHash,
          'envelope',
          encodeEnvelope(envelope),
        ),
      );
    },

    // `signal` is checked before each batch: an aborted purge stops there, trimming nothing more.
    async purge({ olderThan, signal }) {
      const cutoff = olderThan.getTime();
      if (Number.isNaN(cutoff)) throw new RangeError('olderThan must be a valid date');
      const purged =
        (await purgeIndex(keys.open, 'open', cutoff, signal)) +
        (await purgeIndex(keys.done, 'done', cutoff, signal));
      await pruneStateIndexes(signal);
      // Stream ids start with the time they were added (ms), so MINID drops older conflicts.
      if (cutoff > 0 && signal?.aborted !== true) {
        await call('purge', () => redis.xtrim(keys.conflicts, 'MINID', cutoff));
      }
      return purged;
    },

    async stats(): Promise<InboxStats> {
      const [pending, enqueued, processed, conflicts, oldest] = await call('stats', () =>
        scripts.stats(
          keys.pending,
          keys.open,
          keys.done,
          keys.conflicts,
          keys.base,
          retentionMs,
          STATS_PRUNE_CAP,
        ),
      );
      return {
        pending: Number(pending ?? 0),
        enqueued: Number(enqueued ?? 0),
        processed: Number(processed ?? 0),
        oldestUnprocessedAt:
          oldest === '' || oldest === undefined ? undefined : new Date(Number(oldest)),
        conflicts: Number(conflicts ?? 0),
      };
    },
  };
}
