import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { BacklogReading } from '@onceflow/core';
import { asTransport } from './errors.js';

const COUNTS = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesDelayed',
  'ApproximateNumberOfMessagesNotVisible',
] as const;

/**
 * The work queue's approximate counts, as SQS gives them (eventually consistent: about a minute
 * behind on a busy queue). A retry waiting out its delay counts as in flight: the adapter delays
 * with `ChangeMessageVisibility`, so SQS reports it as not visible; `delayed` holds only messages
 * sent with a delay.
 */
export async function readBacklog(
  client: SQSClient,
  queue: { readonly name: string; readonly url: string },
): Promise<BacklogReading> {
  const out = await asTransport('backlog', () =>
    client.send(
      new GetQueueAttributesCommand({ QueueUrl: queue.url, AttributeNames: [...COUNTS] }),
    ),
  );
  const count = (name: (typeof COUNTS)[number]) => Number(out.Attributes?.[name] ?? 0);
  return {
    queue: queue.name,
    ready: count('ApproximateNumberOfMessages'),
    delayed: count('ApproximateNumberOfMessagesDelayed'),
    inFlight: count('ApproximateNumberOfMessagesNotVisible'),
  };
}
