import { z } from 'zod';
import { TransportUnavailableError } from '../errors.js';
import type { BackoffOptions } from './backoff.js';
import { createDeadlineQueue } from './deadline-queue.js';
import { createDownState } from './down-state.js';

/** The default of every adapter's `publishTimeoutMs`: a publish answers within this, stored or not. */
export const DEFAULT_PUBLISH_TIMEOUT_MS = 500;

/**
 * Every adapter's `publishTimeoutMs` config field: the longest a `publish` waits for the broker
 * before it rejects with `TransportUnavailableError` (the receiver then answers 503 with
 * `Retry-After`), 1 ms to 60 s, default 500, so that the answer (with the inbox claim and its release) comes inside a sender's 1 s even on a busy machine.
 */
export const publishTimeoutSchema = z
  .number()
  .int()
  .positive()
  .max(60_000)
  .default(DEFAULT_PUBLISH_TIMEOUT_MS);

export interface PublishDeadlineOptions {
  /** Names the publish in errors: `kafka publish to payments`. */
  readonly name: string;
  /** Longest a publish may take before it rejects, in ms. */
  readonly timeoutMs: number;
  /**
   * True when a failure means the broker is unreachable, so later publishes should fail fast.
   * Default: every `TransportUnavailableError` (a message the broker refused on its own merits,
   * such as one entry of a batch, should answer false).
   */
  readonly isOutage?: ((err: unknown) => boolean) | undefined;
  /** Waits between probes while known down. Default 250 ms doubling up to 5 s, each wait at least half its ceiling. */
  readonly probeBackoff?: BackoffOptions | undefined;
  readonly now?: (() => number) | undefined;
}

/**
 * A transport's publish path under a deadline and a known-down state, so that a receiver answers
 * 503 inside its sender's deadline while the broker is unreachable. Each `run` rejects with
 * `TransportUnavailableError` once `timeoutMs` passed without an answer (its `signal` aborts
 * then; a `publish` that declares no parameter is given one that never aborts, see
 * `withDeadline`). A publish that timed out or failed with an outage marks the broker known down:
 * from then on `run` rejects at once, without calling the broker, except for one probe at a time,
 * let through after a backed-off wait; the first probe that succeeds marks it up again.
 *
 * A publish that timed out may still reach the broker afterwards: the sender's retry publishes
 * the event again, and broker dedupe or the worker's record guard absorb the second copy. Safe
 * for concurrent calls; one per transport.
 */
export interface PublishDeadline {
  run<T>(publish: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** True while the broker is known down. */
  readonly down: boolean;
}

/**
 * @example
 * const deadline = publishDeadline({ name: `mybroker publish to ${queue}`, timeoutMs: config.publishTimeoutMs });
 * // publish: await deadline.run((signal) => client.send(batch, { signal }));
 */
export function publishDeadline(options: PublishDeadlineOptions): PublishDeadline {
  const { name, timeoutMs } = options;
  const isOutage = options.isOutage ?? ((err) => err instanceof TransportUnavailableError);
  const state = createDownState(options);
  const deadlines = createDeadlineQueue(timeoutMs, () => timeoutError(name, timeoutMs));

  return {
    get down() {
      return state.downSince !== undefined;
    },
    async run(publish) {
      if (!state.admit()) {
        throw new TransportUnavailableError(
          `${name}: the broker is unreachable (no answer since ${new Date(state.downSince ?? 0).toISOString()}); failing fast until a probe succeeds`,
        );
      }
      try {
        const result = await deadlines.run(publish);
        state.succeeded();
        return result;
      } catch (err) {
        // A refusal on a message's own merits is an answer: the broker is reachable.
        if (err instanceof PublishTimeoutError || isOutage(err)) state.failed();
        else state.succeeded();
        throw err;
      }
    },
  };
}

/** A call that got no answer within its deadline. */
class PublishTimeoutError extends TransportUnavailableError {}

const timeoutError = (what: string, ms: number) =>
  new PublishTimeoutError(`${what}: no answer from the broker within ${ms} ms`);

/**
 * Runs `call` and rejects with `TransportUnavailableError` if it has not settled within `ms`;
 * `signal` aborts at that moment so the call can stop waiting. The call itself is not undone.
 * A call that declares no parameter (`call.length === 0`, e.g. `async () => …`) gets a shared
 * signal that never aborts instead (see `createDeadlineQueue`, which serves many calls of one
 * length with one timer).
 *
 * @example
 * await withDeadline('sqs publish', 500, (signal) => client.send(command, { abortSignal: signal }));
 */
export function withDeadline<T>(
  what: string,
  ms: number,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  return createDeadlineQueue(ms, () => timeoutError(what, ms)).run(call);
}
