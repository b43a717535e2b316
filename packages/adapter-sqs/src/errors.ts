import { brokerCall } from '@onceflow/core/kit';
import { TransportUnavailableError } from '@onceflow/core';

/** SQS error names meaning "this receipt handle no longer holds the message". */
const HANDLE_GONE = new Set([
  'ReceiptHandleIsInvalid',
  'MessageNotInflight',
  'InvalidReceiptHandle',
]);

/** True when SQS refused a receipt handle: the message's visibility was lost (or it was deleted). */
export function isHandleGone(err: unknown): boolean {
  return err instanceof Error && HANDLE_GONE.has(err.name);
}

/** True for a queue that does not exist (both the JSON and the query protocol's names). */
export function isNoSuchQueue(err: unknown): boolean {
  return (
    err instanceof Error &&
    (err.name === 'QueueDoesNotExist' || err.name === 'AWS.SimpleQueueService.NonExistentQueue')
  );
}

/**
 * Runs one broker call; an error that is not already an `OnceflowError` becomes
 * `TransportUnavailableError` (a refused receipt handle: `LockLostError`), the SDK error as cause.
 */
export const asTransport = <T>(what: string, run: () => Promise<T>): Promise<T> =>
  brokerCall(`sqs ${what}`, run, {
    lockLost: isHandleGone,
    describe: (err) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err)),
  });

/** One message of a `publish` call that SQS did not store. */
export interface SqsUnsentMessage {
  /** Its position in the `publish` call's messages. */
  readonly index: number;
  /**
   * SQS's error code for its entry (`InvalidAttributeValue`, `ThrottlingException`, …), or
   * `NotSent` for a FIFO message left unsent because an earlier batch failed (order per group).
   */
  readonly code: string;
  readonly message: string;
  /** True when SQS blamed the entry itself: sending it again as is cannot succeed. */
  readonly senderFault: boolean;
}

/**
 * `publish` stored some messages and not others: `unsent` names each one that SQS did not store
 * (every other message of the call is stored). A `TransportUnavailableError`, as the contract asks.
 */
export class SqsPublishError extends TransportUnavailableError {
  readonly unsent: readonly SqsUnsentMessage[];
  constructor(total: number, unsent: readonly SqsUnsentMessage[]) {
    const what = unsent
      .slice(0, 5)
      .map((u) => `#${u.index} ${u.code}${u.message ? ` (${u.message})` : ''}`)
      .join('; ');
    super(
      `sqs publish: ${unsent.length} of ${total} messages were not stored: ${what}${unsent.length > 5 ? '; …' : ''}`,
    );
    this.name = 'SqsPublishError';
    this.unsent = unsent;
  }
}
