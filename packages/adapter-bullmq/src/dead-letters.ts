import type { DeadLetter, DeadLetters } from '@onceflow/core';
import { decodeEnvelope, readDeadLetterHeaders } from '@onceflow/core/kit';
import type { Job, JobsOptions, Queue } from 'bullmq';
import type { DeadLetterData } from './delivery.js';
import { asTransport } from './errors.js';

export interface DeadLetterDeps {
  /** The work queue and the dead-letter queue, once the transport has started. */
  queues(): Promise<{ work: Queue<string>; dead: Queue<DeadLetterData> }>;
  /** Retention options every work job is published with. */
  readonly jobOptions: JobsOptions;
}

function toDeadLetter(job: Job<DeadLetterData>): DeadLetter {
  const fallbackAt = new Date(job.timestamp).toISOString();
  return {
    id: job.id ?? '',
    envelope: decodeEnvelope(job.data.body),
    ...readDeadLetterHeaders(job.data.headers ?? {}, fallbackAt),
  };
}

/** Live states: the job is queued or running, so a redrive must not add it again. */
const LIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/**
 * The dead-letter queue `<queue>-dead-letters`: a BullMQ queue that no worker consumes, its
 * jobs waiting in dead-lettering order (ids are BullMQ's increasing job ids). `redrive` puts each
 * message back on the work queue under its original job id (the finished original, kept for the
 * dedupe window, is removed first) with `attempt` starting again at 1, then deletes the dead
 * letter; if the original is live again (re-published meanwhile) the dead letter is only deleted.
 * A crash in between may leave both: the processed-guard keeps that harmless.
 */
export function createDeadLetters(deps: DeadLetterDeps): DeadLetters {
  const select = async (dead: Queue<DeadLetterData>, ids?: readonly string[]) => {
    if (ids === undefined) return dead.getJobs(['wait'], 0, -1, true);
    const jobs = await Promise.all(ids.map((id) => dead.getJob(id)));
    return jobs.filter((j): j is Job<DeadLetterData> => j !== undefined);
  };

  const putBack = async (work: Queue<string>, letter: Job<DeadLetterData>): Promise<void> => {
    const { jobId, body } = letter.data;
    const original = await work.getJob(jobId);
    if (original) {
      const state = await original.getState();
      // `remove` answers 0 for a locked job: someone is processing it, so it is live.
      if (LIVE.has(state) || (await work.remove(jobId)) === 0) return;
    }
    await work.add(letter.name, body, { ...deps.jobOptions, jobId });
  };

  return {
    list: (options) =>
      asTransport('deadLetters.list', async () => {
        const { dead } = await deps.queues();
        const limit = options?.limit;
        if (limit !== undefined && limit <= 0) return [];
        const jobs = await dead.getJobs(['wait'], 0, limit === undefined ? -1 : limit - 1, true);
        return jobs.map(toDeadLetter);
      }),
    get: (id) =>
      asTransport('deadLetters.get', async () => {
        const { dead } = await deps.queues();
        const job = await dead.getJob(id);
        return job === undefined ? undefined : toDeadLetter(job);
      }),
    redrive: (ids) =>
      asTransport('deadLetters.redrive', async () => {
        const { work, dead } = await deps.queues();
        let n = 0;
        for (const letter of await select(dead, ids)) {
          await putBack(work, letter);
          n += await dead.remove(letter.id ?? '');
        }
        return n;
      }),
    purge: (ids) =>
      asTransport('deadLetters.purge', async () => {
        const { dead } = await deps.queues();
        // BullMQ's `remove` answers 1 for an id it does not have: look the ids up first.
        const present =
          ids === undefined
            ? await dead.getRanges(['wait'], 0, -1, true)
            : (await select(dead, ids)).map((job) => job.id ?? '');
        let n = 0;
        for (const id of present) n += await dead.remove(id);
        return n;
      }),
    count: () =>
      asTransport('deadLetters.count', async () => (await deps.queues()).dead.getWaitingCount()),
  };
}
