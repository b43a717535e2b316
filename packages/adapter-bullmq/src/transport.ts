import {
  createLifecycle,
  createSubscriptions,
  decodeDelivery,
  dedupeKeyOf,
  encodeWithinLimit,
  parseConsumeOptions,
  publishDeadline,
} from '@onceflow/core/kit';
import {
  type BacklogProbe,
  type BrokerDeadLetters,
  type ConsumeOptions,
  type HealthCheck,
  type TopologySetup,
  type Transport,
  type TransportCapabilities,
  silentLogger,
} from '@onceflow/core';
import { type Job, type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { type BullmqTransportConfig, parseBullmqConfig } from './config.js';
import { openRedis } from './connection.js';
import { type ConsumerDeps, startConsumer } from './consumer.js';
import {
  type DeadLetterData,
  bodyOf,
  createDeadLetterQueue,
  readDeadLetter,
} from './dead-letter-queue.js';
import { MAX_DELAY_MS } from './delivery.js';
import { asTransport } from './errors.js';
import { jobIdOf } from './job-id.js';

/** A transport over one BullMQ queue, with its dead-letter queue. */
export interface BullmqTransport
  extends Transport,
    TopologySetup,
    BrokerDeadLetters,
    BacklogProbe,
    HealthCheck {
  readonly name: 'bullmq';
  readonly queue: string;
  /**
   * `PING` on the transport's Redis connection (connecting if needed), for readiness probes:
   * rejects with `TransportUnavailableError` when Redis does not answer.
   */
  check(signal?: AbortSignal): Promise<void>;
}

/** A work job as a delivery: `attempt` is BullMQ's `attemptsStarted` (retries and lock expiries). */
const readWork = (job: Job<unknown>) => ({
  envelope: decodeDelivery(bodyOf(job.data)),
  attempt: job.attemptsStarted,
});

const DURABILITY =
  'publish resolves once Redis has run BullMQ’s add script for every job; the jobs are durable only as far as Redis persists them: with appendonly yes and appendfsync always they are on disk before the reply, with appendfsync everysec up to a second of jobs can be lost on a crash, and without AOF (RDB snapshots only, or no persistence) a Redis restart loses them';

interface Opened {
  readonly connection: Redis;
  readonly work: Queue<string>;
  readonly dead: Queue<DeadLetterData>;
}

type Reading = Pick<ConsumerDeps, 'queue' | 'read' | 'deadLetters'>;

/**
 * The onceflow Transport on BullMQ. `publish` adds one job per message with `jobId` = the
 * escaped dedupe key (see `jobIdOf`): while a job with that id exists (waiting, active, delayed,
 * or finished and kept for `dedupeWindowMs`) a re-publish is silently ignored by BullMQ. Each
 * `consume` runs its own BullMQ `Worker`. A job delivered `deliveryLimit` times moves to the
 * dead-letter queue `<queue>-dead-letters`, which `consumeDeadLetters` reads with a `Worker` of
 * its own (ack completes the entry, retry puts it back there, delayed).
 *
 * No I/O in the factory: the first `publish`, `consume` or `consumeDeadLetters` connects, as does
 * `start()` (optional; it may be called again after a failure); `close()` drains every
 * subscription, then disconnects. Reconnects after a Redis restart are ioredis'.
 *
 * @example
 * const transport = createBullmqTransport({ url: 'redis://127.0.0.1:6379', queue: 'payments' });
 * await transport.publish([{ envelope }]);
 */
export function createBullmqTransport(input: BullmqTransportConfig): BullmqTransport {
  const config = parseBullmqConfig(input);
  const logger = config.logger ?? silentLogger;
  const keep = { age: Math.ceil(config.dedupeWindowMs / 1000) };
  const jobOptions: JobsOptions = { removeOnComplete: keep, removeOnFail: keep };
  const subscriptions = createSubscriptions();
  const deadline = publishDeadline({
    name: `bullmq publish to ${config.queue}`,
    timeoutMs: config.publishTimeoutMs,
  });

  const capabilities: TransportCapabilities = {
    brokerDedupe: { windowMs: config.dedupeWindowMs },
    orderingPerKey: false,
    lock: { scope: 'message', ms: config.lockMs },
    maxDelayMs: MAX_DELAY_MS,
    maxMessageBytes: config.maxMessageBytes,
    deliveryLimit: config.deliveryLimit,
    durability: DURABILITY,
  };

  // Aborted by close(): a first connect that waits for an unreachable Redis gives up, so close()
  // (which waits for a set-up under way) returns instead of waiting for Redis.
  const closing = new AbortController();
  const unlessClosed = (ready: Promise<unknown>): Promise<unknown> =>
    Promise.race([
      ready,
      new Promise((_, reject) => {
        const gone = () => reject(new Error('closed before Redis answered'));
        if (closing.signal.aborted) gone();
        else closing.signal.addEventListener('abort', gone, { once: true });
      }),
    ]);

  const open = async (): Promise<Opened> => {
    const connection = openRedis(config.url, config.redis, 'publisher', logger);
    const opts = { connection, prefix: config.prefix };
    const work = new Queue<string>(config.queue, opts);
    const dead = new Queue<DeadLetterData>(config.deadLetterQueue, opts);
    for (const q of [work, dead]) {
      q.on('error', (err) => logger.warn({ err, queue: q.name }, 'bullmq queue error'));
    }
    try {
      await unlessClosed(Promise.all([work.waitUntilReady(), dead.waitUntilReady()]));
    } catch (err) {
      await Promise.all([work.close(), dead.close()]).catch(() => {});
      connection.disconnect();
      throw err;
    }
    return { connection, work, dead };
  };

  const lifecycle = createLifecycle({
    name: `bullmq transport ${config.queue}`,
    start: () => asTransport('start', open),
    close: async (queues) => {
      await subscriptions.closeAll();
      if (!queues) return;
      await Promise.all([queues.work.close(), queues.dead.close()]);
      await queues.connection.quit().catch(() => queues.connection.disconnect());
    },
  });
  const opened = (op: string): Promise<Opened> => lifecycle.start(op);

  const subscribe = async (
    op: string,
    reading: (o: Opened) => Reading,
    handler: ConsumerDeps['handler'],
    options: ConsumeOptions,
  ) => {
    const { concurrency } = parseConsumeOptions(options);
    const o = await opened(op);
    const consumer = await asTransport(op, () =>
      startConsumer({ config, logger, ...reading(o), handler, concurrency }),
    );
    return subscriptions.track(() => consumer.close());
  };

  return {
    name: 'bullmq',
    destination: config.queue,
    queue: config.queue,
    capabilities,

    async start() {
      await opened('start');
    },

    async check() {
      const { connection } = await opened('check');
      await asTransport('check', () => connection.ping());
    },

    async publish(messages) {
      if (messages.length === 0) return;
      const jobs = messages.map((m) => ({
        name: m.envelope.type,
        data: encodeWithinLimit(m.envelope, config.maxMessageBytes),
        opts: { ...jobOptions, jobId: jobIdOf(dedupeKeyOf(m)) },
      }));
      const [one] = jobs;
      await deadline.run(async () => {
        const { work } = await opened('publish');
        await asTransport('publish', async () => {
          if (jobs.length === 1 && one) await work.add(one.name, one.data, one.opts);
          else await work.addBulk(jobs);
        });
      });
    },

    /** `ready`: waiting and prioritized jobs; `delayed`: retries not yet due; `inFlight`: active jobs. */
    async backlog() {
      const { work } = await opened('backlog');
      const c = await asTransport('backlog', () =>
        work.getJobCounts('waiting', 'prioritized', 'delayed', 'active'),
      );
      const n = (state: string) => c[state] ?? 0;
      return {
        queue: config.queue,
        ready: n('waiting') + n('prioritized'),
        delayed: n('delayed'),
        inFlight: n('active'),
      };
    },

    consume: (handler, options) =>
      subscribe(
        'consume',
        ({ dead }) => ({
          queue: config.queue,
          read: readWork,
          deadLetters: createDeadLetterQueue(dead, { limit: config.deliveryLimit, jobOptions }),
        }),
        handler,
        options,
      ),

    consumeDeadLetters: (handler, options) =>
      subscribe(
        'consumeDeadLetters',
        () => ({ queue: config.deadLetterQueue, read: readDeadLetter }),
        handler,
        options,
      ),

    close() {
      closing.abort();
      return lifecycle.close();
    },
  };
}
