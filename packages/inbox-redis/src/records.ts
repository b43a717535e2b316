import { randomUUID } from 'node:crypto';
import type { Envelope, ErrorInfo, RecordStore } from '@onceflow/core';
import { UsageError } from '@onceflow/core';
import {
  completedNote,
  encodeEnvelope,
  nonNegative,
  positiveMs,
  traceIdOf,
} from '@onceflow/core/kit';
import type { Call } from './call.js';
import type { InboxCommands } from './commands.js';
import type { InboxKeys } from './keys.js';

type Deps = {
  readonly call: Call;
  readonly scripts: InboxCommands;
  readonly keys: InboxKeys;
  readonly retentionMs: number;
};

type BeginResult = Awaited<ReturnType<RecordStore['begin']>>;

/** The error a record keeps, as three script arguments (all `''` for none). */
const errorArgs = (error: ErrorInfo | undefined) =>
  error ? ([error.code, error.name, error.message] as const) : (['', '', ''] as const);

/** The envelope's receivedAt in epoch ms, or `''` (the script uses its clock) when it does not parse. */
export function receivedAtArg(envelope: Envelope): number | '' {
  const at = Date.parse(envelope.receivedAt);
  return Number.isNaN(at) ? '' : at;
}

/** The envelope's fields a record keeps, as script arguments: type, key, trace id, receivedAt. */
export const recordArgs = (envelope: Envelope) =>
  [envelope.type, envelope.key ?? '', traceIdOf(envelope) ?? '', receivedAtArg(envelope)] as const;

/**
 * The worker's writes to the record (`release` lives with the store; reads in listing.ts). Each
 * is one script, so one round trip: `begin`, then `complete`, `scheduleRetry` or `deadLetter`.
 * The lease is its own key (`SET … NX PX`); its token stays on the row, so the holder of a lease
 * that ran out can still extend or complete it until another attempt takes it over.
 */
export function createRecordWrites({
  call,
  scripts,
  keys,
  retentionMs,
}: Deps): Pick<
  RecordStore,
  'begin' | 'extend' | 'complete' | 'scheduleRetry' | 'deadLetter' | 'act'
> {
  const { base } = keys;
  return {
    async begin(envelope, { leaseMs, attempt, consumer, redrive }): Promise<BeginResult> {
      const lease = Math.ceil(positiveMs('leaseMs', leaseMs));
      const member = keys.member(envelope.source, envelope.id);
      const token = randomUUID();
      const [status, remaining] = await call('begin', () =>
        scripts.begin(
          keys.row(member),
          keys.workLease(member),
          keys.open,
          token,
          lease,
          retentionMs,
          base,
          member,
          Math.floor(nonNegative('attempt', attempt)),
          consumer ?? '',
          redrive ?? '',
          ...recordArgs(envelope),
        ),
      );
      if (status === 'acquired') return { status, token };
      if (status === 'processed' || status === 'dead-lettered') return { status };
      return { status: 'busy', retryAfterMs: Math.max(1, Number(remaining ?? lease)) };
    },

    async extend(source, id, token, leaseMs) {
      const lease = Math.ceil(positiveMs('leaseMs', leaseMs));
      const member = keys.member(source, id);
      const renewed = await call('extend', () =>
        scripts.extend(keys.row(member), keys.workLease(member), token, lease),
      );
      return renewed === 1;
    },

    async complete(source, id, token, options) {
      const member = keys.member(source, id);
      const note = completedNote(options?.note) ?? '';
      await call('complete', () =>
        scripts.complete(
          keys.row(member),
          keys.workLease(member),
          keys.claimLease(member),
          keys.open,
          keys.done,
          member,
          token,
          retentionMs,
          base,
          note,
        ),
      );
    },

    async scheduleRetry(source, id, token, { error, nextAttemptAt }) {
      const at = nextAttemptAt.getTime();
      if (Number.isNaN(at)) throw new UsageError('nextAttemptAt is not a date');
      const member = keys.member(source, id);
      await call('scheduleRetry', () =>
        scripts.scheduleRetry(
          keys.row(member),
          keys.workLease(member),
          member,
          token,
          retentionMs,
          base,
          at,
          ...errorArgs(error),
        ),
      );
    },

    async deadLetter(envelope, token, fields) {
      const member = keys.member(envelope.source, envelope.id);
      const { reason, error, attempts, actor, note } = fields;
      await call('deadLetter', () =>
        scripts.deadLetter(
          keys.row(member),
          keys.workLease(member),
          keys.open,
          member,
          token ?? '',
          retentionMs,
          base,
          encodeEnvelope(envelope),
          reason,
          ...errorArgs(error),
          Math.floor(nonNegative('attempts', attempts)),
          actor ?? '',
          note ?? '',
          ...recordArgs(envelope),
        ),
      );
    },

    async act(source, id, { kind, actor }) {
      if (kind !== 'redriven' && kind !== 'discarded') {
        throw new UsageError(`not a record action: ${JSON.stringify(kind)}`);
      }
      const member = keys.member(source, id);
      const acted = await call('act', () =>
        scripts.act(keys.row(member), keys.open, keys.done, member, kind, actor, retentionMs, base),
      );
      return acted === 1;
    },
  };
}
