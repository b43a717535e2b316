import { ConfigError } from '../errors.js';
import { type MemoryQueue, type QueueSettings, createMemoryQueue } from './queue.js';

/**
 * The shared state behind memory transports: transports created with the same broker and queue
 * name see the same messages and locks, like several processes on one real broker
 * (a restarted consumer finds what its predecessor left). It lives in this process's memory only.
 */
export interface MemoryBroker {
  /** Messages waiting or in flight on `queue`. */
  depth(queue: string): number;
  /** Names of the queues opened so far. */
  queues(): string[];
}

const queuesOf = new WeakMap<MemoryBroker, Map<string, MemoryQueue>>();

/**
 * @example
 * const broker = createMemoryBroker();
 * const a = createMemoryTransport({ broker, queue: 'orders' });
 * const b = createMemoryTransport({ broker, queue: 'orders' }); // same messages as `a`
 */
export function createMemoryBroker(): MemoryBroker {
  const queues = new Map<string, MemoryQueue>();
  // Stryker disable all: depth() and queues() are memory-only introspection, not part of Transport
  const broker: MemoryBroker = {
    depth: (queue) => queues.get(queue)?.depth() ?? 0,
    queues: () => [...queues.keys()],
  };
  // Stryker restore all
  queuesOf.set(broker, queues);
  return broker;
}

/** The queue named `name`, created with `settings` on first use; later users must agree on them. */
export function openQueue(
  broker: MemoryBroker,
  name: string,
  settings: QueueSettings,
): MemoryQueue {
  const queues = queuesOf.get(broker);
  // Stryker disable next-line all: a broker not made by createMemoryBroker() is a memory-only configuration error
  if (!queues) throw new ConfigError('broker was not made by createMemoryBroker()');
  const existing = queues.get(name);
  if (!existing) {
    const queue = createMemoryQueue(name, settings);
    queues.set(name, queue);
    return queue;
  }
  const s = existing.settings;
  // Stryker disable all: a second opener with other settings is a memory-only configuration error
  if (s.orderingPerKey !== settings.orderingPerKey || s.deliveryLimit !== settings.deliveryLimit) {
    throw new ConfigError(
      `memory queue "${name}" was opened with orderingPerKey ${s.orderingPerKey} and deliveryLimit ${s.deliveryLimit}; got ${settings.orderingPerKey} and ${settings.deliveryLimit}`,
    );
  }
  // Stryker restore all
  return existing;
}
