import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/contracts/transport.js';
import { LockLostError } from '../../src/errors.js';
import { silentLogger } from '../../src/observability/logger.js';
import { createJob } from '../../src/worker/job.js';
import { markLockLost } from '../../src/worker/lock.js';
import { createRunningJobs } from '../../src/worker/running-jobs.js';
import { event } from './fixture.js';

const jobOf = () => {
  const lock = new AbortController();
  const delivery: Delivery = {
    envelope: event('order.placed', {}),
    attempt: 1,
    signal: lock.signal,
    ack: async () => {},
    retry: async () => {},
  };
  return { lock, job: createJob(delivery, undefined, silentLogger, Date.now() + 1_000, 1_000) };
};

describe("a delivery's job", () => {
  it('is aborted with the reason of its delivery, whether its signal was read before or after', () => {
    const before = jobOf();
    const early = before.job.abort.signal;
    const reason = new LockLostError('broker took it back');
    before.lock.abort(reason);
    expect(early.aborted).toBe(true);
    expect(early.reason).toBe(reason);
    expect(before.job.abortedBy).toBe('lock-lost');

    const after = jobOf();
    after.lock.abort(reason);
    expect(after.job.abortedBy).toBe('lock-lost');
    expect(after.job.abort.signal.reason).toBe(reason);
  });

  it('keeps the first cause: a lost lock before shutdown stays lock-lost, and the reverse', () => {
    const lostFirst = jobOf();
    lostFirst.lock.abort('gone');
    const running = createRunningJobs();
    running.add(lostFirst.job);
    running.abortAll(new Error('shutdown'));
    expect(lostFirst.job.abortedBy).toBe('lock-lost');
    expect(lostFirst.job.abort.signal.reason).toBeInstanceOf(LockLostError);

    const shutdownFirst = jobOf();
    const others = createRunningJobs();
    others.add(shutdownFirst.job);
    const shutdown = new Error('shutdown');
    others.abortAll(shutdown);
    shutdownFirst.lock.abort(new LockLostError());
    expect(shutdownFirst.job.abortedBy).toBe('shutdown');
    expect(shutdownFirst.job.abort.signal.reason).toBe(shutdown);
  });

  it("takes a lost lock found by the heartbeat only when the delivery's signal did not abort first", () => {
    const { lock, job } = jobOf();
    const first = new LockLostError('first');
    lock.abort(first);
    markLockLost(job, new LockLostError('second'));
    expect(job.abort.signal.reason).toBe(first);
    job.dispose();
  });
});
