import type { Counter } from 'prom-client';
import type { EventRecord, RecordStore } from '../../src/contracts/records.js';
import type { Delivery, RenewableDelivery, Transport } from '../../src/contracts/transport.js';
import { createEnvelope, type Envelope } from '../../src/envelope.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { createMemoryStore, type MemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport, type MemoryTransport } from '../../src/memory/transport.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { createMetrics, type PrometheusMetrics } from '../../src/observability/metrics.js';
import { createWorker, type Worker, type WorkerConfig } from '../../src/worker/index.js';

/** Polls `check` until it returns a truthy value, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 5_000, what = 'condition' }: { timeoutMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let seq = 0;
/** A JSON envelope with a fresh id unless one is given. */
export function event(
  type: string,
  payload: unknown,
  init: Partial<{ id: string; key: string }> = {},
): Envelope {
  seq++;
  return createEnvelope({
    id: init.id ?? `evt_${seq}_${Math.random().toString(36).slice(2)}`,
    source: 'test',
    type,
    key: init.key,
    payload,
  });
}

/** An envelope with its payload as a plain byte array, to compare a stored copy with the original. */
export const comparable = (envelope: Envelope | undefined) =>
  envelope === undefined ? undefined : { ...envelope, payload: [...envelope.payload] };

/** Sum of a counter's values whose labels include `labels`. */
export async function counted(counter: Counter<string>, labels: Record<string, string> = {}) {
  const { values } = await counter.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((sum, v) => sum + v.value, 0);
}

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface Fixture extends AsyncDisposable {
  readonly transport: MemoryTransport;
  /** The memory store: the workers' event record. */
  readonly store: MemoryStore;
  readonly metrics: PrometheusMetrics;
  readonly logger: Logger;
  readonly logs: LogLine[];
  /** Creates and starts a worker over this fixture's transport and store; closed on dispose. */
  worker(
    config: Omit<WorkerConfig, 'transport' | 'records'> & {
      transport?: Transport;
      records?: WorkerConfig['records'];
    },
  ): Promise<Worker>;
  publish(...envelopes: Envelope[]): Promise<void>;
  /** Resolves once nothing is waiting or in flight on the queue. */
  drained(timeoutMs?: number): Promise<void>;
  /** The dead letters in the event record, oldest first. */
  deadLetters(): Promise<readonly EventRecord[]>;
  /** Resolves with the record of (`source`, default `test`, `id`) once it is in `state`. */
  recordIn(
    id: string,
    state: EventRecord['state'],
    options?: { source?: string; timeoutMs?: number },
  ): Promise<EventRecord & { readonly envelope?: Envelope | undefined }>;
}

/** A memory transport and store, a metrics registry and a captured logger, disposed together. */
export function fixture(
  transportOptions: Parameters<typeof createMemoryTransport>[0] = {},
): Fixture {
  const transport = createMemoryTransport(transportOptions);
  const store = createMemoryStore();
  const metrics = createMetrics();
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  });
  const workers: Worker[] = [];
  return {
    transport,
    store,
    metrics,
    logger,
    logs,
    async worker(config) {
      const w = createWorker({ transport, records: store, metrics, logger, ...config });
      workers.push(w);
      await w.start();
      return w;
    },
    publish: (...envelopes) => transport.publish(envelopes.map((envelope) => ({ envelope }))),
    drained: (timeoutMs = 5_000) =>
      waitFor(() => transport.broker.depth(transport.queue) === 0, {
        timeoutMs,
        what: 'an empty queue',
      }).then(() => undefined),
    deadLetters: async () => (await store.list({ state: 'dead-lettered', limit: 1000 })).records,
    recordIn: (id, state, { source = 'test', timeoutMs = 5_000 } = {}) =>
      waitFor(
        async () => {
          const record = await store.get(source, id);
          return record?.state === state ? record : undefined;
        },
        { timeoutMs, what: `record ${id} ${state}` },
      ),
    async [Symbol.asyncDispose]() {
      await Promise.all(workers.map((w) => w.close()));
      await transport.close();
    },
  };
}

/**
 * The memory transport with one broker behaviour changed: its deliveries cannot renew their lock
 * (no `renewLock`), as on a broker whose lock is lost with the consumer's session (the lock then
 * expires and the message is redelivered while the first handler still runs).
 */
export function withUnrenewableLocks(transport: MemoryTransport): Transport {
  return withDeliveries(transport, (delivery) => ({
    envelope: delivery.envelope,
    attempt: delivery.attempt,
    signal: delivery.signal,
    ack: () => delivery.ack(),
    retry: (o) => delivery.retry(o),
  }));
}

/**
 * The memory transport with `onLockCall` told of each call by which a delivery holds or gives
 * up its lock (`renewLock`, `ack`, `retry`), as the call is made: a test whose assertions need a
 * short lock held can then tell whether every call came in time (see `lockCallsInTime`).
 */
export function withLockCalls(transport: MemoryTransport, onLockCall: () => void): Transport {
  return withDeliveries(transport, (delivery): RenewableDelivery => {
    const renewable = delivery as RenewableDelivery;
    return {
      envelope: delivery.envelope,
      attempt: delivery.attempt,
      signal: delivery.signal,
      ack() {
        onLockCall();
        return delivery.ack();
      },
      retry(o) {
        onLockCall();
        return delivery.retry(o);
      },
      renewLock() {
        onLockCall();
        return renewable.renewLock();
      },
    };
  });
}

/** The memory transport with each delivery handed to the handler as `wrap` makes it. */
function withDeliveries(transport: MemoryTransport, wrap: (d: Delivery) => Delivery): Transport {
  return {
    name: transport.name,
    capabilities: transport.capabilities,
    publish: (messages) => transport.publish(messages),
    close: () => transport.close(),
    consume: (handler, options) =>
      transport.consume((delivery) => handler(wrap(delivery)), options),
  };
}

/**
 * Tells whether each lock call of a run came while a lock of `lockMs` was surely held: within
 * three quarters of it of the call before, the first of `start()` (called just before the
 * publish, so no later than the lock was taken). A stall of the machine (a starved process, a GC
 * pause) between two calls may rightly let a short lock go: a run whose `inTime` is false proves
 * nothing about the lock, and is run again.
 */
export function lockCallsInTime(lockMs: number) {
  let since = Date.now();
  let inTime = true;
  return {
    /** Call just before publishing: the lock runs from later than this. */
    start() {
      since = Date.now();
      inTime = true;
    },
    /** Call as a lock call is made. */
    call() {
      const at = Date.now();
      inTime &&= at - since < lockMs * 0.75;
      since = at;
    },
    get inTime() {
      return inTime;
    },
  };
}

/**
 * The memory store behind a switch: while a method's name (or `*`) is in `down`, calls to it
 * reject with `StoreUnavailableError` without reaching the store, as a database that is down.
 * `calls` counts the calls of each method, failed ones included.
 */
export function withOutages(store: MemoryStore) {
  const down = new Set<keyof RecordStore | '*'>();
  const calls = new Map<string, number>();
  const records = new Proxy(store, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function' || typeof name !== 'string') return value;
      return async (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1);
        if (down.has('*') || down.has(name as keyof RecordStore)) {
          throw new StoreUnavailableError(`${name}: the store is down`);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { records, down, calls };
}
