import { LockLostError } from '@onceflow/core';
import { createEnvelope, silentLogger } from '@onceflow/core';
import type { Job } from 'bullmq';
import { describe, expect, it, vi } from 'vitest';
import { jobDelivery } from '../src/delivery.js';

// Redis counts a job's lock from when `moveToActive` ran, this process from the job's
// `processedOn`: under load the two differ, and Redis may still accept a settlement after the
// handler was told its lock is lost. The delivery refuses it itself.
describe('a BullMQ delivery whose lock this process counts lost', () => {
  const lockMs = 1000;
  const job = { id: 'j1', queueName: 'late', processedOn: Date.now() - 2 * lockMs } as Job<unknown>;
  const envelope = createEnvelope({ id: 'e1', source: 's', type: 't', payload: {} });
  const delivery = () => {
    const complete = vi.fn(async () => {});
    const d = jobDelivery({ lockMs, complete, logger: silentLogger, queue: 'late' }, job, 'token', {
      envelope,
      attempt: 1,
    });
    return { d, complete };
  };

  it('refuses ack and retry with LockLostError without sending either to Redis', async () => {
    const { d, complete } = delivery();
    expect(() => d.ack()).toThrow(LockLostError);
    await expect(d.retry({ delayMs: 0 })).rejects.toThrow(LockLostError);
    expect(complete).not.toHaveBeenCalled();
    d.dispose();
  });
});
