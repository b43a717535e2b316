import type { Tracer } from '@opentelemetry/api';
import { z } from 'zod';
import type { Inbox } from './contracts/inbox.js';
import type { ClaimCheckMode } from './claim-check/mode.js';
import { claimCheckPublisher } from './claim-check/publish.js';
import type { ReceiverTransport } from './receiver/config.js';
import { errorLogFields, eventLogFields } from './observability/event-fields.js';
import { type Logger, silentLogger } from './observability/logger.js';
import type { OnceflowMetrics } from './observability/metrics.js';
import { publishTraced } from './observability/trace-publish.js';
import { resolveTracer } from './observability/tracing.js';
import { createTicker, type Ticker } from './ticker.js';
import { parseConfig } from './transport-kit/parse-config.js';

const schema = z.object({
  inbox: z.custom<Pick<Inbox, 'takeStale' | 'markEnqueued'>>(
    (v) => typeof (v as { takeStale?: unknown } | null)?.takeStale === 'function',
    'an Inbox',
  ),
  transport: z.custom<ReceiverTransport>(
    (v) => typeof (v as { publish?: unknown } | null)?.publish === 'function',
    'a Transport',
  ),
  claimCheck: z.union([z.enum(['always', 'oversize']), z.literal(false)]).default(false),
  olderThanMs: z.number().int().nonnegative().default(60_000),
  leaseMs: z.number().int().positive().default(30_000),
  intervalMs: z.number().int().positive().default(10_000),
  batchSize: z.number().int().positive().default(100),
  logger: z.custom<Logger>().default(silentLogger),
  metrics: z.custom<OnceflowMetrics>().optional(),
  tracer: z.custom<Tracer>().optional().transform(resolveTracer),
});

export interface RelayOptions {
  inbox: Pick<Inbox, 'takeStale' | 'markEnqueued'>;
  /** Only `publish` is used (and `capabilities.maxMessageBytes`, with `claimCheck: 'oversize'`). */
  transport: ReceiverTransport;
  /** The receiver's `claimCheck`: give the relay the same, so it re-publishes references alike. Default false. */
  claimCheck?: ClaimCheckMode | undefined;
  /** Only claims made longer ago than this (and whose lease ran out) are taken. Default 60 s. */
  olderThanMs?: number | undefined;
  /** Lease the relay takes on each claim while publishing it. Default 30 s. */
  leaseMs?: number | undefined;
  /** Time between runs after `start()`. Default 10 s. */
  intervalMs?: number | undefined;
  /** Claims taken (and published in one `publish`) per batch. Default 100. */
  batchSize?: number | undefined;
  logger?: Logger | undefined;
  metrics?: OnceflowMetrics | undefined;
  /**
   * OpenTelemetry tracer for the `send` span of each batch, linked to each claim's receipt (the
   * envelopes keep their trace context, so their deliveries continue the receipt's trace).
   * Default: the global API's, a no-op until an SDK is registered.
   */
  tracer?: Tracer | undefined;
}

/**
 * Publishes inbox claims that were never enqueued: the receiver crashed (or its `markEnqueued`
 * failed) between claim and publish. The envelope may already be on the broker; broker dedupe on
 * the same dedupe key and the worker's processed-guard make the second copy harmless.
 *
 * Safe to run on several processes at once: `takeStale` hands each claim to one taker under a
 * lease. On a failed publish nothing is released: the lease runs out and a later run retries.
 *
 * `close()` stops the timer and waits for a run in progress. It closes neither the inbox nor the
 * transport: their creator does, after `relay.close()`.
 */
export interface Relay extends Ticker {
  /** Drains stale claims batch by batch; resolves with how many it published. Rejects if a publish failed. */
  runOnce(): Promise<number>;
}

/**
 * @example
 * const relay = createRelay({ inbox, transport, logger });
 * relay.start();
 * // on shutdown
 * await relay.close();
 */
export function createRelay(options: RelayOptions): Relay {
  const c = parseConfig('relay config', schema, options);
  const { inbox, olderThanMs, leaseMs, intervalMs, batchSize, logger, metrics, tracer } = c;
  const transport =
    c.claimCheck === false ? c.transport : claimCheckPublisher(c.transport, c.claimCheck);

  const runBatch = async (): Promise<number> => {
    const stale = await inbox.takeStale({ olderThanMs, leaseMs, limit: batchSize });
    if (stale.length === 0) return 0;
    const messages = stale.map(({ envelope }) => ({ envelope }));
    await publishTraced(tracer, transport, messages, { created: true });
    await Promise.all(
      stale.map(async ({ envelope, token }) => {
        metrics?.relayRepublished.inc({ source: envelope.source });
        try {
          await inbox.markEnqueued(envelope.source, envelope.id, token);
          logger.info(eventLogFields(envelope), 'relay published a stale inbox claim');
        } catch (err) {
          logger.warn(
            { ...eventLogFields(envelope), ...errorLogFields(err) },
            'relay markEnqueued failed; a later run publishes again',
          );
        }
      }),
    );
    logger.info({ count: stale.length }, 'relay published stale inbox claims');
    return stale.length;
  };

  return createTicker({
    intervalMs,
    logger,
    name: 'relay',
    run: async () => {
      let total = 0;
      for (;;) {
        const n = await runBatch();
        total += n;
        if (n < batchSize) return total;
      }
    },
  });
}
