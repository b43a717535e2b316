import { LockLostError, OnceflowError, TransportUnavailableError } from '@onceflow/core';

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
export async function asTransport<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof OnceflowError) throw err;
    const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (isHandleGone(err))
      throw new LockLostError(`sqs ${what}: the visibility timeout ran out (${text})`, {
        cause: err,
      });
    throw new TransportUnavailableError(`sqs ${what} failed: ${text}`, { cause: err });
  }
}
