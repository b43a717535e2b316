import { randomUUID } from 'node:crypto';

/**
 * The broker of the example: an in-process queue service with the shape of a real queue client
 * (SQS, Azure Service Bus). A received message is hidden for its visibility timeout and comes back
 * with `receiveCount + 1` once that runs out; its receipt handle is then refused. It has no
 * dead-letter queue: onceflow keeps dead letters in the event record. One process only, state in the heap: a fake for the example.
 */
export interface QClient {
  /** Creates the queue. Idempotent. */
  createQueue(queue: string): Promise<void>;
  deleteQueue(queue: string): Promise<void>;
  /** Stores every entry, in order; an entry whose `dedupeId` was sent in the last 5 min is dropped. */
  send(queue: string, entries: readonly QEntry[]): Promise<void>;
  /** Up to `max` visible messages, oldest first, each hidden for `visibilityMs`. */
  receive(queue: string, options: QReceiveOptions): Promise<QMessage[]>;
  delete(queue: string, receiptHandle: string): Promise<void>;
  /** Hides the message for `ms` from now (0: visible at once). Returns the new `lockedUntil`. */
  changeVisibility(queue: string, receiptHandle: string, ms: number): Promise<number>;
}

/** The broker's documented limits. */
export const Q_LIMITS = {
  maxBodyBytes: 256 * 1024,
  maxVisibilityMs: 12 * 3_600_000,
  dedupeWindowMs: 5 * 60_000,
} as const;

export interface QEntry {
  readonly body: string;
  readonly dedupeId: string;
}

export interface QReceiveOptions {
  readonly max: number;
  readonly visibilityMs: number;
  /** Long poll: wait this long for a message when none is visible. */
  readonly waitMs: number;
  /** Ends the long poll early, with no messages. */
  readonly signal?: AbortSignal | undefined;
}

export interface QMessage {
  readonly id: string;
  readonly body: string;
  readonly receiptHandle: string;
  /** 1 on the first receive. */
  readonly receiveCount: number;
  /** When the visibility timeout runs out (epoch ms). */
  readonly lockedUntil: number;
}

/** What the broker refuses, by `code`. */
export class QClientError extends Error {
  constructor(
    readonly code: 'NoSuchQueue' | 'ReceiptHandleInvalid' | 'MessageTooLong' | 'InvalidParameter',
    message: string,
  ) {
    super(message);
    this.name = 'QClientError';
  }
}

/** True when the receipt handle no longer holds the message: its visibility timeout ran out. */
export const isReceiptGone = (err: unknown): boolean =>
  err instanceof QClientError && err.code === 'ReceiptHandleInvalid';

interface Stored {
  id: string;
  body: string;
  receiveCount: number;
  visibleAt: number;
  receiptHandle?: string;
}

interface Queue {
  messages: Stored[];
  /** dedupeId → when it is forgotten. */
  dedupe: Map<string, number>;
  /** Long polls to wake when a message may have become visible. */
  waiters: Set<() => void>;
}

/**
 * @example
 * const client = createFakeQClient();
 * await client.createQueue('orders');
 * await client.send('orders', [{ body: 'hello', dedupeId: 'm1' }]);
 */
export function createFakeQClient(): QClient {
  const queues = new Map<string, Queue>();

  const open = (name: string): Queue => {
    const q = queues.get(name);
    if (!q) throw new QClientError('NoSuchQueue', `queue ${name} does not exist`);
    return q;
  };
  const wake = (q: Queue) => {
    for (const waiter of q.waiters) waiter();
  };
  /** Waits `ms`, or less if a message may have become visible or `signal` aborts. */
  const nap = (q: Queue, ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        q.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      q.waiters.add(done);
      signal?.addEventListener('abort', done);
    });
  /** The message this receipt handle holds, while its visibility timeout runs. */
  const held = (q: Queue, receiptHandle: string): Stored => {
    const m = q.messages.find((s) => s.receiptHandle === receiptHandle);
    if (!m || m.visibleAt <= Date.now())
      throw new QClientError(
        'ReceiptHandleInvalid',
        'the receipt handle no longer holds a message',
      );
    return m;
  };
  const checkVisibility = (ms: number) => {
    if (!(ms >= 0 && ms <= Q_LIMITS.maxVisibilityMs))
      throw new QClientError('InvalidParameter', `visibility ${ms} ms is out of range`);
  };

  return {
    async createQueue(name) {
      if (!queues.has(name))
        queues.set(name, { messages: [], dedupe: new Map(), waiters: new Set() });
    },
    async deleteQueue(name) {
      queues.delete(name);
    },
    async send(name, entries) {
      const q = open(name);
      for (const e of entries)
        if (Buffer.byteLength(e.body) > Q_LIMITS.maxBodyBytes)
          throw new QClientError('MessageTooLong', `body over ${Q_LIMITS.maxBodyBytes} bytes`);
      const now = Date.now();
      for (const e of entries) {
        if ((q.dedupe.get(e.dedupeId) ?? 0) > now) continue;
        q.dedupe.set(e.dedupeId, now + Q_LIMITS.dedupeWindowMs);
        q.messages.push({ id: randomUUID(), body: e.body, receiveCount: 0, visibleAt: now });
      }
      wake(q);
    },
    async receive(name, { max, visibilityMs, waitMs, signal }) {
      checkVisibility(visibilityMs);
      const q = open(name);
      const deadline = Date.now() + waitMs;
      for (;;) {
        if (signal?.aborted) return [];
        const now = Date.now();
        const visible = q.messages.filter((m) => m.visibleAt <= now).slice(0, max);
        if (visible.length > 0 || now >= deadline) {
          return visible.map((m) => {
            m.receiveCount++;
            m.visibleAt = now + visibilityMs;
            m.receiptHandle = randomUUID();
            const { id, body, receiptHandle, receiveCount } = m;
            return { id, body, receiptHandle, receiveCount, lockedUntil: m.visibleAt };
          });
        }
        const nextVisible = Math.min(deadline, ...q.messages.map((m) => m.visibleAt));
        await nap(q, nextVisible - now, signal);
      }
    },
    async delete(name, receiptHandle) {
      const q = open(name);
      const m = held(q, receiptHandle);
      q.messages = q.messages.filter((s) => s !== m);
    },
    async changeVisibility(name, receiptHandle, ms) {
      checkVisibility(ms);
      const q = open(name);
      const m = held(q, receiptHandle);
      m.visibleAt = Date.now() + ms;
      wake(q);
      return m.visibleAt;
    },
  };
}
