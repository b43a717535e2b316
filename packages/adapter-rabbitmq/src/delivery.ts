import {
  checkRetryDelay,
  type DeliveryInit,
  type RetryOptions,
  runDelivery,
  type WireFormat,
} from '@onceflow/core/kit';
import {
  type Delivery,
  type Envelope,
  type Logger,
  LockLostError,
  errorLogFields,
  eventLogFields,
} from '@onceflow/core';
import type { Message } from 'amqplib';
import type { AckBatcher } from './acks.js';
import {
  fromWorkMessage,
  toDeadLetterMessage,
  toWorkMessage,
  type WorkMessage,
} from './marshal.js';
import type { OutgoingAmqp } from './publisher.js';
import type { QueueNames } from './topology.js';

/** The consumer channel a delivery arrived on; `signal` aborts when that channel is lost. */
export interface ConsumerChannel {
  readonly acks: AckBatcher;
  readonly signal: AbortSignal;
}

export interface DeliveryDeps {
  readonly names: QueueNames;
  readonly maxMessageBytes: number;
  /** What retries and dead-letter copies are written in. */
  readonly wireFormat: WireFormat;
  readonly deliveryLimit: number;
  /** The longest retry delay (the largest bucket). */
  readonly maxDelayMs: number;
  readonly logger: Logger;
  /** Publishes with confirms (the transport's publisher). */
  send(messages: readonly OutgoingAmqp[]): Promise<void>;
  /**
   * The delay bucket of `target` for `delayMs` (declared on first use), or `target` itself for 0.
   * Throws `RangeError` for a delay beyond `maxDelayMs`.
   */
  retryQueue(target: string, delayMs: number): Promise<string>;
}

/**
 * The settle operations every delivery shares: ack, and publish-a-copy-then-ack. Every settlement
 * rejects with `LockLostError`, publishing nothing, once the consumer channel is lost. `replace`
 * acks the original only once the broker confirmed the copy, so nothing is lost in between; if the
 * channel is lost in that window the original returns as well and arrives again (the worker's
 * record guard makes it harmless). `ack` resolves once written to the channel (acks of one
 * event-loop turn go out together, see `acks.ts`); AMQP does not confirm acks, so an ack lost with
 * its connection means one more delivery.
 *
 * A class, not closures: one is made per delivery. `queue` and `id` name the delivery in errors.
 */
export class Settle {
  constructor(
    protected readonly deps: DeliveryDeps,
    protected readonly on: ConsumerChannel,
    private readonly msg: Message,
    private readonly queue: string,
    private readonly id: string,
  ) {}

  ack(): Promise<void> {
    if (this.on.signal.aborted) return Promise.reject(this.lost());
    return this.on.acks.ack(this.msg).then(undefined, (err: unknown) => {
      throw new LockLostError(`${this.queue}/${this.id}: ack failed: ${(err as Error).message}`, {
        cause: err,
      });
    });
  }

  /** Publishes `copy` (confirmed), then acks the original. */
  async replace(copy: OutgoingAmqp): Promise<void> {
    if (this.on.signal.aborted) throw this.lost();
    await this.deps.send([copy]);
    await this.ack();
  }

  private lost(): LockLostError {
    return new LockLostError(
      `${this.queue}/${this.id}: its consumer channel closed; it will be redelivered`,
    );
  }
}

/** The dead-letter copy of a work message that had `attempts` deliveries. */
const deadLetterCopy = (
  deps: DeliveryDeps,
  work: WorkMessage,
  attempts: number,
  error = work.lastError,
) =>
  toDeadLetterMessage(
    deps.names.deadLetter,
    work,
    {
      reason: `delivery limit exceeded after ${attempts} deliveries`,
      attempts,
      lastError: error,
      deadLetteredAt: new Date().toISOString(),
    },
    deps.wireFormat,
  );

/**
 * The broker side of one work-queue delivery, for the kit's `runDelivery`. `retry` publishes a
 * copy with `attempt + 1` to a delay bucket (or straight back to the work queue for 0), except
 * that a retry of the `deliveryLimit`-th delivery moves the message to `<queue>.dlq` instead.
 * Consumer-scoped lock: nothing to renew, so it is not a `RenewableDelivery`.
 */
class WorkDelivery extends Settle implements DeliveryInit {
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly signal: AbortSignal;

  constructor(
    deps: DeliveryDeps,
    on: ConsumerChannel,
    msg: Message,
    private readonly work: WorkMessage,
  ) {
    super(deps, on, msg, deps.names.work, work.envelope.id);
    this.envelope = work.envelope;
    this.attempt = work.attempt;
    this.signal = on.signal;
  }

  async retry({ delayMs, error }: RetryOptions): Promise<void> {
    const { deps, work } = this;
    if (work.attempt >= deps.deliveryLimit) {
      checkRetryDelay(delayMs, deps.maxDelayMs);
      return this.replace(deadLetterCopy(deps, work, work.attempt, error ?? work.lastError));
    }
    const queue = await deps.retryQueue(deps.names.work, delayMs);
    const next = { ...work, attempt: work.attempt + 1, lastError: error ?? work.lastError };
    await this.replace(toWorkMessage(queue, next, deps.maxMessageBytes, deps.wireFormat));
  }
}

/**
 * Handles one work-queue message: runs `handler` on it, or, when its attempt is past
 * `deliveryLimit` (redelivered after its consumer died, counted by a quorum queue), moves it to
 * `<queue>.dlq` without running the handler. A move that fails leaves the message with its
 * channel, which returns it when it closes.
 */
export function receiveWork(
  deps: DeliveryDeps,
  handler: (delivery: Delivery) => Promise<void>,
): (on: ConsumerChannel, msg: Message) => Promise<void> {
  const onError = (err: unknown, work: WorkMessage) =>
    deps.logger.warn(
      {
        ...eventLogFields(work.envelope, work.attempt),
        ...errorLogFields(err),
        queue: deps.names.work,
      },
      'settlement not recorded',
    );
  return async (on, msg) => {
    const work = fromWorkMessage(msg);
    if (work.attempt > deps.deliveryLimit) {
      const settle = new Settle(deps, on, msg, deps.names.work, work.envelope.id);
      await settle
        .replace(deadLetterCopy(deps, work, work.attempt - 1))
        .catch((err: unknown) => onError(err, work));
      return;
    }
    await runDelivery(handler, new WorkDelivery(deps, on, msg, work), {
      onError: (err) => onError(err, work),
    });
  };
}
