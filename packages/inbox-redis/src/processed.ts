import { randomUUID } from 'node:crypto';
import type { BeginResult, ProcessedStore } from '@onceflow/core';
import { positiveMs } from '@onceflow/core/kit';
import type { Call } from './call.js';
import type { InboxCommands } from './commands.js';
import type { InboxKeys } from './keys.js';

type Deps = {
  readonly call: Call;
  readonly scripts: InboxCommands;
  readonly keys: InboxKeys;
  readonly retentionMs: number;
};

/**
 * The worker's processed-guard half of the store (`release` lives with the store). The lease is
 * its own key (`SET … NX PX`); its token stays on the row, so the holder of a lease that ran out
 * can still extend or complete it until another attempt takes it over.
 */
export function createProcessedMethods({
  call,
  scripts,
  keys,
  retentionMs,
}: Deps): Omit<ProcessedStore, 'release'> {
  return {
    async begin(source, id, { leaseMs }): Promise<BeginResult> {
      const lease = Math.ceil(positiveMs('leaseMs', leaseMs));
      const member = keys.member(source, id);
      const token = randomUUID();
      const [status, remaining] = await call('begin', () =>
        scripts.begin(keys.row(member), keys.workLease(member), token, lease, retentionMs),
      );
      if (status === 'acquired') return { status, token };
      if (status === 'processed') return { status };
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

    async complete(source, id, token) {
      const member = keys.member(source, id);
      await call('complete', () =>
        scripts.complete(
          keys.row(member),
          keys.workLease(member),
          keys.claimLease(member),
          keys.pending,
          keys.open,
          keys.done,
          member,
          token,
          retentionMs,
        ),
      );
    },
  };
}
