import type { DeadLetter, DeadLetters, Logger } from '@onceflow/core';
import { brokerCall } from '@onceflow/core/kit';
import type { ConfirmChannel, GetMessage } from 'amqplib';
import type { Link } from './link.js';
import { fromDeadLetterMessage, toWorkMessage } from './marshal.js';
import type { QueueNames } from './topology.js';

type Letter = DeadLetter & { readonly dedupeKey: string };

interface Scanned {
  readonly msg: GetMessage;
  readonly letter: Letter;
}

/**
 * The dead-letter queue `<queue>.dlq` as the `DeadLetters` API. Each call reads the queue from its
 * head with `basic.get` on a channel of its own, settles what it acts on (redrive publishes to the
 * work queue with attempt 1 and acks only after the broker confirmed), and hands every other
 * message back with `nack(requeue)`, which a classic queue puts back in its old position; the call
 * resolves after a round trip on that channel, so the queue is whole again when it does.
 *
 * A dead letter's id is its dedupe key. Publishing has no broker dedupe, so one message can reach
 * the queue twice (redelivered after a lost connection, re-published by the relay): reading keeps
 * the oldest copy of each id and removes the others, so every id is listed and counted once.
 *
 * Limits: every call, `count` included, reads the queue, so it takes time linear in the depth;
 * calls of one transport instance run one after another, but a reader elsewhere (another process)
 * sees the messages a call holds as absent while it runs;
 * a message that is not a v1 envelope is left in place, never listed or counted.
 */
export function createDeadLetters(deps: {
  readonly link: Link;
  readonly names: QueueNames;
  readonly logger: Logger;
  /** The transport's topology, declared once (the dead-letter queue and the work queue). */
  readonly ready: () => Promise<void>;
}): DeadLetters {
  const { names } = deps;

  // Calls of this instance run one at a time: two readers would see each other's messages as absent.
  let queue: Promise<unknown> = Promise.resolve();
  const withChannel = <T>(what: string, body: (read: Reader) => Promise<T>): Promise<T> => {
    const run = queue.then(() => readWith(what, body));
    queue = run.catch(() => {});
    return run;
  };

  const readWith = <T>(what: string, body: (read: Reader) => Promise<T>): Promise<T> =>
    brokerCall(`rabbitmq deadLetters.${what}`, async () => {
      await deps.ready();
      const ch = await (await deps.link.connection()).createConfirmChannel();
      ch.on('error', () => {});
      try {
        const result = await body(reader(ch));
        ch.nackAll(true);
        await ch.checkQueue(names.deadLetter); // the requeue above has reached the queue
        return result;
      } finally {
        await ch.close().catch(() => {});
      }
    });

  interface Reader {
    readonly ch: ConfirmChannel;
    /** The next distinct dead letter from the head, or undefined at the end. */
    next(): Promise<Scanned | undefined>;
    all(): Promise<Scanned[]>;
  }

  const reader = (ch: ConfirmChannel): Reader => {
    const seen = new Set<string>();
    const next = async (): Promise<Scanned | undefined> => {
      for (;;) {
        const msg = await ch.get(names.deadLetter, { noAck: false });
        if (msg === false) return undefined;
        let letter: Letter;
        try {
          letter = fromDeadLetterMessage(msg);
        } catch (err) {
          deps.logger.warn(
            { err, queue: names.deadLetter },
            'dead letter is not a v1 envelope; left in place',
          );
          continue;
        }
        if (seen.has(letter.id)) {
          ch.ack(msg); // a second copy of a dead letter already read: removed
          continue;
        }
        seen.add(letter.id);
        return { msg, letter };
      }
    };
    return {
      ch,
      next,
      async all() {
        const out: Scanned[] = [];
        for (let s = await next(); s; s = await next()) out.push(s);
        return out;
      },
    };
  };

  const matching = (scanned: Scanned[], ids?: readonly string[]) => {
    const wanted = ids && new Set(ids);
    return scanned.filter((s) => !wanted || wanted.has(s.letter.id));
  };

  const strip = ({ dedupeKey: _, ...letter }: Letter): DeadLetter => letter;

  return {
    list: (options) =>
      withChannel('list', async (read) => {
        const limit = options?.limit ?? Number.POSITIVE_INFINITY;
        const letters: DeadLetter[] = [];
        while (letters.length < limit) {
          const next = await read.next();
          if (!next) break;
          letters.push(strip(next.letter));
        }
        return letters;
      }),
    get: (id) =>
      withChannel('get', async (read) => {
        for (let s = await read.next(); s; s = await read.next()) {
          if (s.letter.id === id) return strip(s.letter);
        }
        return undefined;
      }),
    redrive: (ids) =>
      withChannel('redrive', async ({ ch, all }) => {
        const chosen = matching(await all(), ids);
        if (chosen.length === 0) return 0;
        let unroutable = false;
        ch.on('return', () => {
          unroutable = true;
        });
        for (const { letter } of chosen) {
          const work = { envelope: letter.envelope, dedupeKey: letter.dedupeKey, attempt: 1 };
          const out = toWorkMessage(names.work, work, Number.MAX_SAFE_INTEGER);
          ch.publish('', out.queue, out.body, { ...out.options, mandatory: true });
        }
        await ch.waitForConfirms();
        if (unroutable) throw new Error(`work queue ${names.work} does not exist`);
        for (const { msg } of chosen) ch.ack(msg);
        return chosen.length;
      }),
    purge: (ids) =>
      withChannel('purge', async ({ ch, all }) => {
        const chosen = matching(await all(), ids);
        for (const { msg } of chosen) ch.ack(msg);
        return chosen.length;
      }),
    count: () => withChannel('count', async ({ all }) => (await all()).length),
  };
}
