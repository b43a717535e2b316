import type { Delivery, RenewableDelivery } from '@onceflow/core';
import { ConformanceTimeoutError } from './wait.js';

/**
 * What a spied handler saw: `received` when called, `acked`/`retried` when the first settlement
 * it made resolved, `returned`/`threw` when it finished.
 */
export type SpyEventKind = 'received' | 'acked' | 'retried' | 'returned' | 'threw';

export interface SpyEvent {
  readonly kind: SpyEventKind;
  /** The envelope id. */
  readonly id: string;
  readonly attempt: number;
  /** The label passed to `spy.handler(label)`. */
  readonly consumer: string;
  /** `Date.now()` when it happened; for settlements, when the call was made. */
  readonly at: number;
  readonly delivery: Delivery;
  /** For `retried`: what was asked. */
  readonly retry?: { readonly delayMs: number } | undefined;
  readonly error?: unknown;
}

/** What the spied handler does with each delivery. Default: ack. */
export type SpyBehaviour = (
  delivery: Delivery,
  info: { readonly consumer: string },
) => Promise<void>;

/** `processed` is an alias of `acked`. */
export type SpyWaitKind = SpyEventKind | 'processed';

export interface HandlerSpy {
  /** A handler for `consume`; `consumer` labels its events. */
  handler(consumer?: string): (delivery: Delivery) => Promise<void>;
  /** Replaces the behaviour for deliveries received from now on. */
  setBehaviour(behaviour: SpyBehaviour): void;
  readonly events: readonly SpyEvent[];
  /** Events of `kind`, optionally for one envelope id, in order. */
  of(kind: SpyWaitKind, id?: string): SpyEvent[];
  count(kind: SpyWaitKind, id?: string): number;
  /** Resolves with the first event of `kind` for `id` (and `attempt`), already seen or to come. */
  waitFor(
    id: string,
    kind: SpyWaitKind,
    options?: { readonly attempt?: number; readonly timeoutMs?: number },
  ): Promise<SpyEvent>;
  /** Resolves once `count` events of `kind` (for `id`, if given) were seen. */
  waitForCount(
    kind: SpyWaitKind,
    count: number,
    options?: { readonly id?: string; readonly timeoutMs?: number },
  ): Promise<void>;
  /** Handler calls running now, and the most seen at once. */
  readonly running: number;
  readonly maxRunning: number;
}

const norm = (kind: SpyWaitKind): SpyEventKind => (kind === 'processed' ? 'acked' : kind);

/**
 * A handler that records what it is handed and how each delivery was settled, with waits that
 * have deadlines, so tests wait on events rather than on sleeps.
 *
 * @example
 * const spy = createHandlerSpy();
 * await transport.consume(spy.handler(), { concurrency: 1 });
 * await spy.waitFor(envelope.id, 'processed');
 */
export function createHandlerSpy(
  behaviour: SpyBehaviour = (d) => d.ack(),
  options: { readonly timeoutMs?: number } = {},
): HandlerSpy {
  const defaultTimeout = options.timeoutMs ?? 5000;
  const events: SpyEvent[] = [];
  const listeners = new Set<() => void>();
  let current = behaviour;
  let running = 0;
  let maxRunning = 0;

  const record = (event: SpyEvent) => {
    events.push(event);
    for (const listener of [...listeners]) listener();
  };

  const wrap = (d: Delivery, consumer: string): Delivery => {
    let settled = false;
    const base = { id: d.envelope.id, attempt: d.attempt, consumer, delivery: d };
    const settle = async (
      kind: 'acked' | 'retried',
      call: () => Promise<void>,
      extra: Partial<SpyEvent> = {},
    ) => {
      const first = !settled;
      settled = true;
      const at = Date.now();
      await call();
      if (first) record({ ...base, ...extra, kind, at });
    };
    const renewable = d as Partial<RenewableDelivery>;
    return {
      envelope: d.envelope,
      attempt: d.attempt,
      signal: d.signal,
      ack: () => settle('acked', () => d.ack()),
      retry: (o) =>
        settle('retried', () => d.retry(o), { retry: { delayMs: o.delayMs }, error: o.error }),
      ...(typeof renewable.renewLock === 'function'
        ? { renewLock: () => (d as RenewableDelivery).renewLock() }
        : {}),
    };
  };

  const waitOn = (done: () => SpyEvent | true | undefined, timeoutMs: number, what: () => string) =>
    new Promise<SpyEvent | true>((resolve, reject) => {
      const check = () => {
        const hit = done();
        if (hit === undefined) return;
        cleanup();
        resolve(hit);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new ConformanceTimeoutError(`not within ${timeoutMs} ms: ${what()}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  const of = (kind: SpyWaitKind, id?: string) =>
    events.filter((e) => e.kind === norm(kind) && (id === undefined || e.id === id));

  const history = (id?: string) =>
    events
      .filter((e) => id === undefined || e.id === id)
      .slice(-12)
      .map((e) => `${e.consumer}:${e.id}#${e.attempt}:${e.kind}`)
      .join(', ') || '(nothing)';

  return {
    handler(consumer = 'default') {
      return async (d) => {
        const behave = current;
        running++;
        maxRunning = Math.max(maxRunning, running);
        record({
          kind: 'received',
          id: d.envelope.id,
          attempt: d.attempt,
          consumer,
          at: Date.now(),
          delivery: d,
        });
        const wrapped = wrap(d, consumer);
        try {
          await behave(wrapped, { consumer });
          running--;
          record({
            kind: 'returned',
            id: d.envelope.id,
            attempt: d.attempt,
            consumer,
            at: Date.now(),
            delivery: d,
          });
        } catch (error) {
          running--;
          record({
            kind: 'threw',
            id: d.envelope.id,
            attempt: d.attempt,
            consumer,
            at: Date.now(),
            delivery: d,
            error,
          });
          throw error;
        }
      };
    },
    setBehaviour(behaviour) {
      current = behaviour;
    },
    events,
    of,
    count: (kind, id) => of(kind, id).length,
    async waitFor(id, kind, o = {}) {
      const found = () =>
        of(kind, id).find((e) => o.attempt === undefined || e.attempt === o.attempt);
      const what = () =>
        `${id} ${kind}${o.attempt === undefined ? '' : ` (attempt ${o.attempt})`}; seen: ${history(id)}`;
      return (await waitOn(found, o.timeoutMs ?? defaultTimeout, what)) as SpyEvent;
    },
    async waitForCount(kind, count, o = {}) {
      const what = () =>
        `${count} × ${kind}${o.id ? ` of ${o.id}` : ''}, saw ${of(kind, o.id).length}; last: ${history(o.id)}`;
      await waitOn(
        () => (of(kind, o.id).length >= count ? true : undefined),
        o.timeoutMs ?? defaultTimeout,
        what,
      );
    },
    get running() {
      return running;
    },
    get maxRunning() {
      return maxRunning;
    },
  };
}
