import {
  type Delivery,
  type Envelope,
  type Logger,
  type Subscription,
  errorLogFields,
  eventLogFields,
} from '@onceflow/core';
import { runDelivery } from '@onceflow/core/kit';
import type { Job } from 'bullmq';
import type { ResolvedBullmqConfig } from './config.js';
import { openRedis } from './connection.js';
import type { DeadLetterQueue } from './dead-letter-queue.js';
import { type JobDeliveryDeps, jobDelivery } from './delivery.js';
import { AdapterWorker, SETTLED } from './worker.js';

/**
 * BullMQ's own give-up on a job whose lock expired too often (`maxStalledCount`) fails it to the
 * failed set, where nothing reads it, and counts lock expiries only: set out of reach, so that
 * `deliveryLimit` (retries and lock expiries alike) decides, and the job goes to the dead-letter queue.
 */
const NEVER = Number.MAX_SAFE_INTEGER;

export interface ConsumerDeps {
  readonly config: ResolvedBullmqConfig;
  readonly logger: Logger;
  /** The BullMQ queue consumed: the work queue, or the dead-letter queue. */
  readonly queue: string;
  /** What a fetched job is as a delivery. */
  readonly read: (job: Job<unknown>) => { envelope: Envelope; attempt: number };
  /** On the work queue: where jobs go past `deliveryLimit`. Absent on the dead-letter queue. */
  readonly deadLetters?: DeadLetterQueue | undefined;
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly concurrency: number;
}

/**
 * A BullMQ `Worker` on `queue`: `concurrency` = worker concurrency, `lockDuration` = `lockMs`,
 * no automatic lock renewal (a lock lasts until `renewLock`, so a hung handler loses it as the
 * contract says), and the stalled check every `stalledIntervalMs` moving jobs whose lock expired
 * back to wait. Each job runs through the kit's `runDelivery`; settlements are recorded by the
 * adapter (see `jobDelivery`), never by BullMQ's own completion; an ack fetches the next job in
 * the same script (see `AdapterWorker`).
 *
 * A work job delivered past `deliveryLimit` (its last delivery's lock expired: a crash loop, a
 * hung handler) moves to the dead-letter queue without reaching the handler. If that move fails
 * the job stays active and comes back when its lock expires.
 *
 * `close()` stops fetching, waits for every running handler and its settlement, then closes the
 * worker's connections. Idempotent.
 */
export async function startConsumer(deps: ConsumerDeps): Promise<Subscription> {
  const { config, logger, queue, deadLetters } = deps;

  // One per consumer: what each job's delivery settles through.
  const settling: JobDeliveryDeps = {
    lockMs: config.lockMs,
    complete: (done, doneToken) => worker.complete(done, doneToken),
    deadLetters,
    logger,
    queue,
  };
  const processor = async (job: Job<unknown>, token?: string): Promise<void> => {
    const lockToken = token ?? job.token ?? '';
    const read = deps.read(job);
    if (deadLetters && read.attempt > deadLetters.limit) {
      await deadLetters.move(job, lockToken, { attempts: read.attempt - 1 }).catch((err) => {
        logger.warn(
          { ...eventLogFields(read.envelope, read.attempt), ...errorLogFields(err), queue },
          'not moved to the dead-letter queue',
        );
      });
      throw SETTLED;
    }
    const init = jobDelivery(settling, job, lockToken, read);
    try {
      await runDelivery(deps.handler, init, init);
    } finally {
      init.dispose();
    }
    throw SETTLED;
  };

  const connection = openRedis(config.url, config.redis, 'worker', logger);
  const worker = new AdapterWorker(queue, processor, {
    connection,
    prefix: config.prefix,
    concurrency: deps.concurrency,
    lockDuration: config.lockMs,
    skipLockRenewal: true,
    stalledInterval: config.stalledIntervalMs ?? Math.min(config.lockMs, 30_000),
    maxStalledCount: NEVER,
    autorun: false,
  });
  worker.on('error', (err) => logger.warn({ err, queue }, 'bullmq worker error'));
  const running = worker.run().catch((err: unknown) => {
    logger.error({ err, queue }, 'bullmq worker stopped');
  });
  try {
    await worker.waitUntilReady();
  } catch (err) {
    await worker.close(true).catch(() => {});
    connection.disconnect();
    throw err;
  }

  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        await worker.close();
        await running;
        await connection.quit().catch(() => connection.disconnect());
      })();
      return closed;
    },
  };
}
