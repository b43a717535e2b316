import type { BacklogProbe, BacklogReading, Transport } from '../contracts/transport.js';
import { ConfigError } from '../errors.js';
import { createTicker, type Ticker } from '../ticker.js';
import { type Logger, silentLogger } from './logger.js';
import type { OnceflowMetrics } from './metrics.js';

export interface BacklogMonitorOptions {
  readonly metrics: OnceflowMetrics;
  /** Transports whose work queues to read; each must implement `BacklogProbe`. */
  readonly transports: readonly Transport[];
  /** How often to ask the brokers. Default 15 s (a Prometheus scrape interval). */
  readonly intervalMs?: number | undefined;
  readonly logger?: Logger | undefined;
}

const hasBacklog = (t: Transport): t is Transport & BacklogProbe =>
  typeof (t as Partial<BacklogProbe>).backlog === 'function';

/** The reading as gauge values; a state the broker cannot tell is left out. */
function record(metrics: OnceflowMetrics, transport: string, reading: BacklogReading): void {
  const { queue } = reading;
  const states: [string, number | undefined][] = [
    ['ready', reading.ready],
    ['delayed', reading.delayed],
    ['in-flight', reading.inFlight],
  ];
  for (const [state, value] of states) {
    if (value !== undefined) metrics.brokerMessages.set({ transport, queue, state }, value);
  }
  for (const { partition, lag } of reading.lag ?? []) {
    metrics.consumerLag.set({ transport, queue, partition: String(partition) }, lag);
  }
}

/**
 * Keeps the broker gauges current: `onceflow_broker_messages{state}` (ready, delayed, in-flight)
 * for each transport's work queue, and `onceflow_consumer_lag{partition}` where the broker has
 * partitions (Kafka). Each run asks every broker once, one after the other; a broker that fails to
 * answer leaves its gauges as they were and is logged, and the others are still read. The timer is
 * unref'd. A transport without `BacklogProbe` is refused with `ConfigError`.
 *
 * @example
 * const monitor = createBacklogMonitor({ metrics, transports: [transport] });
 * monitor.start();
 */
export function createBacklogMonitor(options: BacklogMonitorOptions): Ticker {
  const { metrics, transports } = options;
  const logger = options.logger ?? silentLogger;
  const probes = transports.map((t) => {
    if (!hasBacklog(t))
      throw new ConfigError(`backlog monitor: the ${t.name} transport has no backlog() to read`);
    return t;
  });
  const run = async (): Promise<number> => {
    let read = 0;
    let failure: unknown;
    for (const t of probes) {
      try {
        record(metrics, t.name, await t.backlog());
        read++;
      } catch (err) {
        logger.warn({ err, transport: t.name }, 'backlog monitor: the broker did not answer');
        failure ??= err;
      }
    }
    if (failure !== undefined && read === 0) throw failure;
    return read;
  };
  return createTicker({
    intervalMs: options.intervalMs ?? 15_000,
    logger,
    name: 'backlog monitor',
    run,
  });
}
