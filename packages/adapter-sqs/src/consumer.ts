import {
  ChangeMessageVisibilityCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import {
  createBackoff,
  createInFlight,
  decodeDelivery,
  ONCEFLOW_HEADERS,
  runDelivery,
} from '@onceflow/core/kit';
import {
  type Delivery,
  type Logger,
  type Subscription,
  errorLogFields,
  eventLogFields,
} from '@onceflow/core';
import { type DeliveryDeps, type Received, receivedDelivery } from './delivery.js';
import { createSlots } from './slots.js';

export interface ConsumerDeps extends DeliveryDeps {
  readonly fifo: boolean;
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly concurrency: number;
  /** The visibility timeout each receive asks for, and each delivery's lock. */
  readonly lockMs: number;
  /** A received message's `attempt` (work queue and dead-letter queue count differently). */
  readonly attemptOf: (message: Message) => number;
  readonly waitTimeSeconds: number;
  readonly logger: Logger;
}

/** Messages per receive: SQS's maximum. */
const RECEIVE_MAX = 10;
/**
 * Once a slot is free, how long a loop waits for a full batch's worth before it receives, in ms:
 * receives stay full instead of fetching one message per freed slot, and slots held by long
 * handlers never keep the free ones idle for more than this.
 */
const GATHER_MS = 20;

/** Receive loops per consumer: one per 10 of concurrency (SQS returns 10 at most), up to 4. */
const loopsFor = (concurrency: number) => Math.min(4, Math.ceil(concurrency / 10));

/**
 * Messages a consumer may hold (received, not yet settled). On a FIFO queue twice `concurrency`:
 * SQS returns a group's messages together (against ElasticMQ about 8 in 10 of a receive wait on
 * a predecessor of their group), and a message waiting on its predecessor is held without a
 * handler call, so holding only `concurrency` would leave most handler slots idle. Handler calls
 * stay within `concurrency` either way.
 */
const heldFor = (concurrency: number, fifo: boolean) => (fifo ? 2 * concurrency : concurrency);

/**
 * Long-polls one queue (the work queue, or the dead-letter queue for `consumeDeadLetters`) and
 * runs each message through the kit's `runDelivery`, its body decoded with the kit's
 * `decodeDelivery` (a body that is not an envelope reaches the handler as an
 * `onceflow.undecodable` envelope, for the worker to record as a dead letter). At most
 * `concurrency` handler calls run at once; at most that many messages are held (received and not
 * yet settled), twice that on a FIFO queue (see `heldFor`). On a FIFO queue one
 * receive may return several messages of a group: they run one after another, and when one is not
 * acked the group's later ones are made visible again unhandled, so the group
 * keeps its order (their receive count, and so their `attempt`, still grows by one). On a
 * standard queue, copies of one dedupe key held by this consumer run one after another. Receive
 * errors (an unreachable endpoint, throttling) are logged and retried with jittered backoff.
 *
 * `close()` stops receiving, then resolves once every in-flight handler has returned and its
 * settlement is recorded. An open long poll is not aborted but waited for (up to
 * `waitTimeSeconds`), and what it brings is made visible again at once: SQS would otherwise hand
 * the next messages to the abandoned request, hiding them for a whole visibility timeout.
 * Idempotent.
 */
export function startConsumer(deps: ConsumerDeps): Subscription {
  const { client, url, logger } = deps;
  const inFlight = createInFlight(deps.concurrency);
  const slots = createSlots(heldFor(deps.concurrency, deps.fifo));
  /** Every scheduled message until it is settled or released: `close()` waits for them. */
  const held = new Set<Promise<void>>();
  const stop = new AbortController();
  const margin = Math.min(1000, deps.lockMs / 10);

  const release = (m: Message) =>
    client
      .send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      )
      .catch((err: unknown) => logger.debug({ err, url }, 'sqs: releasing a message failed'));

  /** Runs one message; true when it was acked (its group may go on). `onLockLost` is called once if its visibility is lost. */
  const deliver = async (received: Received, onLockLost: () => void): Promise<boolean> => {
    const m = received.message;
    if (Date.now() >= received.receivedAt + received.lockMs - margin) return false; // waited too long: it returns on its own
    const envelope = decodeDelivery(m.Body ?? '');
    const init = receivedDelivery(deps, received, envelope, deps.attemptOf(m));
    init.onLockLost(onLockLost);
    try {
      const outcome = await runDelivery(deps.handler, init, {
        onError: (err) =>
          logger.warn(
            { ...eventLogFields(envelope, init.attempt), ...errorLogFields(err), url },
            'sqs: settlement not recorded',
          ),
      });
      return outcome?.kind === 'ack';
    } finally {
      init.dispose();
    }
  };

  /** Standard queues: the copies of a dedupe key in this consumer, by key (see `schedule`). */
  const copies = new Map<string, Promise<boolean>>();

  /**
   * Runs each message in its own slot, after its predecessor, if it has one: on a FIFO queue the
   * previous message of its group in the same receive (it runs only if that one was acked;
   * otherwise it is released unhandled); on a standard queue a copy of the same
   * dedupe key still held by this consumer (so the record guard acks the duplicate at once
   * instead of retrying it as busy). A predecessor counts as done once it is settled or its
   * visibility is lost, so a redelivery never waits on a hung handler.
   */
  const schedule = (messages: readonly Message[], receivedAt: number) => {
    const groups = new Map<string, Promise<boolean>>();
    for (const message of messages) {
      const key = deps.fifo
        ? message.Attributes?.MessageGroupId
        : message.MessageAttributes?.[ONCEFLOW_HEADERS.dedupeKey]?.StringValue;
      const chain = deps.fifo ? groups : copies;
      const before = key === undefined ? undefined : chain.get(key);
      let finish!: (ok: boolean) => void;
      const done = new Promise<boolean>((resolve) => {
        finish = resolve;
      });
      if (key !== undefined) chain.set(key, done);
      const task = (async () => {
        try {
          if (before !== undefined && !(await before) && deps.fifo) {
            await release(message);
            return;
          }
          while (!inFlight.hasRoom) await inFlight.whenRoom();
          const received = { message, receivedAt, lockMs: deps.lockMs };
          const ok = await inFlight.run(() => deliver(received, () => finish(false)));
          finish(ok);
        } finally {
          finish(false);
          slots.release(1);
          if (key !== undefined && chain.get(key) === done) chain.delete(key);
        }
      })();
      held.add(task);
      void task.finally(() => held.delete(task));
    }
  };

  const loop = async () => {
    const backoff = createBackoff({ baseDelayMs: 200, maxDelayMs: 5_000 });
    while (!stop.signal.aborted) {
      const n = await slots.acquire(RECEIVE_MAX, GATHER_MS);
      if (n === 0) break;
      let messages: Message[];
      try {
        const out = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: n,
            WaitTimeSeconds: deps.waitTimeSeconds,
            VisibilityTimeout: Math.ceil(deps.lockMs / 1000),
            MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
            MessageAttributeNames: ['All'],
          }),
        );
        messages = out.Messages ?? [];
        backoff.reset();
      } catch (err) {
        slots.release(n);
        if (stop.signal.aborted) break;
        const waitMs = backoff.next();
        logger.warn({ err, url, waitMs }, 'sqs: receive failed; retrying');
        await new Promise((r) => setTimeout(r, waitMs));
        continue;
      }
      slots.release(n - messages.length);
      if (stop.signal.aborted) {
        slots.release(messages.length);
        await Promise.all(messages.map(release));
        break;
      }
      schedule(messages, Date.now());
    }
  };

  const loops = Array.from({ length: loopsFor(deps.concurrency) }, loop);
  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        stop.abort();
        slots.close();
        await Promise.all(loops);
        await Promise.all(held);
        await inFlight.idle();
      })();
      return closed;
    },
  };
}
