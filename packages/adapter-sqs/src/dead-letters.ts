import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DeadLetter, DeadLetters, Logger } from '@onceflow/core';
import { ONCEFLOW_HEADERS, dedupeKeyOf } from '@onceflow/core/kit';
import { fromDeadLetterMessage } from './dead-letter-message.js';
import { asTransport } from './errors.js';
import { attributeBytes, attributeHeaders, groupIdOf, type SqsOutgoing, sqsId } from './marshal.js';
import { sendAll } from './publish.js';

/** The client and queue URLs, known once the transport has started. */
export interface DeadLetterTarget {
  readonly client: SQSClient;
  readonly url: string;
  readonly deadLetterUrl: string;
}

export interface DeadLetterDeps {
  /** Starts the transport if needed; throws once it is closed. */
  readonly target: () => Promise<DeadLetterTarget>;
  readonly fifo: boolean;
  readonly maxReceiveCount: number;
  readonly scanSeconds: number;
  readonly logger: Logger;
}

/** Most messages one scan reads; a larger dead-letter queue is listed in part. */
const SCAN_LIMIT = 10_000;

interface Scanned {
  readonly message: Message;
  /** Undefined for a body that is not an envelope: listed by no call, left in the queue. */
  readonly letter: DeadLetter | undefined;
}
type Letter = Scanned & { readonly letter: DeadLetter };

const order = (a: Message, b: Message) =>
  Number(a.Attributes?.SentTimestamp) - Number(b.Attributes?.SentTimestamp) ||
  (BigInt(a.Attributes?.SequenceNumber ?? 0) < BigInt(b.Attributes?.SequenceNumber ?? 0) ? -1 : 1);

/** Ids as the batch calls want them: entries of at most 10. */
function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += 10) out.push(items.slice(i, i + 10));
  return out;
}

/**
 * The dead-letter API over the dead-letter queue. SQS cannot browse a queue, so every call but
 * `count` scans it: it receives every message (hiding them for `scanSeconds`), acts on the ones
 * asked for, and makes the rest visible again at once. Consequences: two scans at the same time
 * see each other's messages as absent; on a FIFO dead-letter queue a group SQS moved there itself
 * shows at most 10 messages per scan; scans read at most 10,000 messages. Redrive sends a new
 * message (so `attempt` starts again at 1) with a deduplication id of its own, then deletes the
 * dead letter. `count` is SQS's approximate message count.
 */
export function createDeadLetters(deps: DeadLetterDeps): DeadLetters {
  const { logger } = deps;

  const receive = (client: SQSClient, url: string, wait: number) =>
    client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: deps.scanSeconds,
        WaitTimeSeconds: wait,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );

  const visible = async (client: SQSClient, url: string) => {
    const out = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
  };

  /** Every dead letter, oldest first; they stay hidden until `done` releases or deletes them. */
  const scan = async (client: SQSClient, url: string): Promise<Scanned[]> => {
    const messages: Message[] = [];
    // Short polls while they return messages; once one comes back empty, a 1-second long poll
    // (which asks every SQS server) only if SQS still counts visible messages.
    for (let wait = 0; messages.length < SCAN_LIMIT; ) {
      const got = (await receive(client, url, wait)).Messages ?? [];
      messages.push(...got);
      if (got.length > 0) wait = 0;
      else if (wait === 0 && (await visible(client, url)) > 0) wait = 1;
      else break;
    }
    return messages.sort(order).map((message) => {
      try {
        return { message, letter: fromDeadLetterMessage(message, deps.maxReceiveCount) };
      } catch (err) {
        logger.warn({ err, messageId: message.MessageId }, 'sqs: dead letter is not an envelope');
        return { message, letter: undefined };
      }
    });
  };

  const releaseAll = async (client: SQSClient, url: string, messages: readonly Message[]) => {
    for (const batch of chunks(messages))
      await client.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: batch.map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      );
  };
  const deleteAll = async (client: SQSClient, url: string, messages: readonly Message[]) => {
    for (const batch of chunks(messages))
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
  };

  /** Scans, lets `act` take the chosen letters, deletes those and releases the rest. */
  const withScan = <T>(
    op: string,
    ids: readonly string[] | undefined,
    act: (chosen: Letter[], target: DeadLetterTarget) => Promise<T>,
    remove = false,
  ) =>
    asTransport(`deadLetters.${op}`, async () => {
      const target = await deps.target();
      const { client, deadLetterUrl: url } = target;
      const all = await scan(client, url);
      const wanted = ids === undefined ? undefined : new Set(ids);
      const chosen = all.filter(
        (s): s is Letter => s.letter !== undefined && (wanted?.has(s.letter.id) ?? true),
      );
      const deleted = new Set<Scanned>();
      try {
        const result = await act(chosen, target);
        if (remove) {
          await deleteAll(
            client,
            url,
            chosen.map((s) => s.message),
          );
          for (const s of chosen) deleted.add(s);
        }
        return result;
      } finally {
        await releaseAll(
          client,
          url,
          all.filter((s) => !deleted.has(s)).map((s) => s.message),
        );
      }
    });

  const redriven = (s: Letter): SqsOutgoing => {
    const { envelope } = s.letter;
    const headers = attributeHeaders(s.message);
    const attributes = Object.fromEntries(
      Object.entries(s.message.MessageAttributes ?? {}).filter(
        ([name]) => name.startsWith('x-onceflow-') && !name.startsWith('x-onceflow-dead-letter'),
      ),
    );
    const body = s.message.Body ?? '';
    const dedupeId = sqsId(`redrive:${s.letter.id}`);
    const key = dedupeKeyOf({ envelope, dedupeKey: headers[ONCEFLOW_HEADERS.dedupeKey] });
    return {
      body,
      attributes,
      dedupeId,
      groupId: groupIdOf(envelope, sqsId(key)),
      bytes: Buffer.byteLength(body, 'utf8') + attributeBytes(attributes),
    };
  };

  return {
    list: (options) =>
      withScan('list', undefined, async (chosen) =>
        chosen.slice(0, options?.limit ?? chosen.length).map((s) => s.letter),
      ),
    get: (id) => withScan('get', [id], async (chosen) => chosen[0]?.letter),
    redrive: (ids) =>
      withScan(
        'redrive',
        ids,
        async (chosen, { client, url }) => {
          await sendAll({ client, url, fifo: deps.fifo }, chosen.map(redriven));
          return chosen.length;
        },
        true,
      ),
    purge: (ids) => withScan('purge', ids, async (chosen) => chosen.length, true),
    count: () =>
      asTransport('deadLetters.count', async () => {
        const { client, deadLetterUrl } = await deps.target();
        const out = await client.send(
          new GetQueueAttributesCommand({
            QueueUrl: deadLetterUrl,
            AttributeNames: [
              'ApproximateNumberOfMessages',
              'ApproximateNumberOfMessagesNotVisible',
              'ApproximateNumberOfMessagesDelayed',
            ],
          }),
        );
        const a = out.Attributes ?? {};
        return (
          Number(a.ApproximateNumberOfMessages ?? 0) +
          Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
          Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
        );
      }),
  };
}
