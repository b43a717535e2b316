import type { Delivery, Envelope, Logger, Subscription } from '@onceflow/core';
import { decodeEnvelope, runDelivery } from '@onceflow/core/kit';
import { type Job, type Queue, UnrecoverableError } from 'bullmq';
import type { ResolvedBullmqConfig } from './config.js';
import { openRedis } from './connection.js';
import { type DeadLetterData, jobDelivery } from './delivery.js';
import { AdapterWorker, SETTLED } from './worker.js';

export interface ConsumerDeps {
  readonly config: ResolvedBullmqConfig;
  readonly logger: Logger;
  readonly deadLetterQueue: Queue<DeadLetterData>;
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly concurrency: number;
  readonly lockMs: number;
}

/**
 * A BullMQ `Worker` on the queue: `concurrency` = worker concurrency, `lockDuration` = `lockMs`,
 * no automatic lock renewal (a lock lasts until `extendLock`, so a hung handler loses it as the
 * contract says), and the stalled check every `stalledIntervalMs` moving jobs whose lock expired
 * back to wait. Each job runs through the kit's `runDelivery`; settlements are recorded by the
 * adapter (see `jobDelivery`), never by BullMQ's own completion; an ack fetches the next job in
 * the same script (see `AdapterWorker`).
 *
 * A job whose data is not a wire format v1 envelope is moved to BullMQ's failed set with the
 * reason (it cannot be a dead letter: it has no envelope).
 *
 * `close()` stops fetching, waits for every running handler and its settlement, then closes the
 * worker's connections. Idempotent.
 */
export async function startConsumer(deps: ConsumerDeps): Promise<Subscription> {
  const { config, logger } = deps;

  const processor = async (job: Job<string>, token?: string): Promise<void> => {
    const lockToken = token ?? job.token ?? '';
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(job.data);
    } catch (err) {
      logger.error({ err, queue: config.queue, jobId: job.id }, 'not an onceflow envelope');
      throw new UnrecoverableError(`wire format: ${(err as Error).message}`);
    }
    const init = jobDelivery(
      {
        deadLetterQueue: deps.deadLetterQueue,
        lockMs: deps.lockMs,
        maxLockMs: config.maxLockMs,
        complete: (done, doneToken) => worker.complete(done, doneToken),
      },
      job,
      lockToken,
      envelope,
    );
    try {
      await runDelivery(deps.handler, init, {
        onError: (err) =>
          logger.warn({ err, queue: config.queue, id: envelope.id }, 'settlement not recorded'),
      });
    } finally {
      init.dispose();
    }
    throw SETTLED;
  };

  const connection = openRedis(config.url, config.redis, 'worker', logger);
  const worker = new AdapterWorker(config.queue, processor, {
    connection,
    prefix: config.prefix,
    concurrency: deps.concurrency,
    lockDuration: deps.lockMs,
    skipLockRenewal: true,
    stalledInterval: config.stalledIntervalMs ?? Math.min(deps.lockMs, 30_000),
    maxStalledCount: config.maxStalledCount,
    autorun: false,
  });
  worker.on('error', (err) => logger.warn({ err, queue: config.queue }, 'bullmq worker error'));
  const running = worker.run().catch((err: unknown) => {
    logger.error({ err, queue: config.queue }, 'bullmq worker stopped');
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
