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
  const broker: MemoryBroker = {
    depth: (queue) => queues.get(queue)?.depth() ?? 0,
    queues: () => [...queues.keys()],
  };
  queuesOf.set(broker, queues);
  return broker;
}

/** Whether `value` was made by `createMemoryBroker()` (of this copy of the package). */
export const isMemoryBroker = (value: unknown): value is MemoryBroker =>
  queuesOf.has(value as MemoryBroker);

/** The settings a second opener of a queue must agree on, in words (the refusal says them). */
const described = (s: QueueSettings) =>
  `orderingPerKey ${s.orderingPerKey}, dedupeWindowMs ${s.dedupeWindowMs} and deliveryLimit ${s.deadLetters ? s.deadLetters.after : false}`;

/**
 * The queue named `name` of a broker `isMemoryBroker` accepted, created with `settings` on first
 * use; a later opener that disagrees on them is refused with a `ConfigError`.
 */
export function openQueue(
  broker: MemoryBroker,
  name: string,
  settings: QueueSettings,
): MemoryQueue {
  const queues = queuesOf.get(broker) as Map<string, MemoryQueue>;
  const existing = queues.get(name);
  if (!existing) {
    const queue = createMemoryQueue(name, settings);
    queues.set(name, queue);
    return queue;
  }
  const was = described(existing.settings);
  const now = described(settings);
  if (was !== now)
    throw new ConfigError(`memory queue "${name}" was opened with ${was}; got ${now}`);
  return existing;
}
