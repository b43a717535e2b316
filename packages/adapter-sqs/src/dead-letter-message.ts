import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { DeadLetter, ErrorInfo } from '@onceflow/core';
import {
  type DeadLetterFields,
  deadLetterHeaders,
  ONCEFLOW_HEADERS,
  readDeadLetterHeaders,
} from '@onceflow/core/kit';
import { attributeHeaders, envelopeOf, sqsId, textAttribute } from './marshal.js';

/** What `SendMessage` to the dead-letter queue carries. */
export interface DeadLetterEntry {
  readonly MessageBody: string;
  readonly MessageAttributes: Record<string, MessageAttributeValue>;
  readonly MessageDeduplicationId?: string;
  readonly MessageGroupId?: string;
}

const MAX_REASON_BYTES = 1024;
const MAX_ERROR_BYTES = 2500;

/** The error's JSON within `MAX_ERROR_BYTES`, its message shortened as needed (kept parseable). */
function errorJson(error: ErrorInfo): string {
  let message = error.message;
  for (;;) {
    const json = JSON.stringify({ ...error, message });
    if (Buffer.byteLength(json, 'utf8') <= MAX_ERROR_BYTES || message === '') return json;
    message = message.slice(0, Math.floor(message.length / 2));
  }
}

/**
 * A received work-queue message as a dead-letter-queue message: the same body and onceflow
 * attributes, plus reason, attempts, last error and time (`deadLetterHeaders`). On FIFO queues the
 * deduplication id is derived from the work-queue message id, so dead-lettering one delivery twice
 * (after a failed delete) stores it once, and each dead letter is its own group, so that a
 * listing is never held up behind another dead letter.
 */
export function toDeadLetterEntry(
  message: Message,
  fields: DeadLetterFields,
  fifo: boolean,
): DeadLetterEntry {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, a] of Object.entries(message.MessageAttributes ?? {}))
    if (name.startsWith('x-onceflow-')) attributes[name] = a;
  const headers = deadLetterHeaders({ ...fields, lastError: undefined });
  if (fields.lastError) headers[ONCEFLOW_HEADERS.deadLetterError] = errorJson(fields.lastError);
  for (const [name, value] of Object.entries(headers)) {
    const a = textAttribute(
      value,
      name === ONCEFLOW_HEADERS.deadLetterError ? MAX_ERROR_BYTES : MAX_REASON_BYTES,
    );
    if (a) attributes[name] = a;
  }
  const id = sqsId(`dead-letter:${message.MessageId ?? message.ReceiptHandle}`);
  return {
    MessageBody: message.Body ?? '',
    MessageAttributes: attributes,
    ...(fifo ? { MessageDeduplicationId: id, MessageGroupId: id } : {}),
  };
}

/**
 * A dead-letter-queue message read back. Messages SQS moved there itself (the redrive policy's
 * `maxReceiveCount`) carry no onceflow reason: they read as `reason: 'maxReceiveCount exceeded'`
 * with `attempts` = the policy's count. Throws `WireFormatError` for a body that is not an envelope.
 */
export function fromDeadLetterMessage(message: Message, maxReceiveCount: number): DeadLetter {
  const headers = attributeHeaders(message);
  const sentAt = new Date(Number(message.Attributes?.SentTimestamp ?? Date.now())).toISOString();
  const fields = readDeadLetterHeaders(headers, sentAt);
  const byPolicy = headers[ONCEFLOW_HEADERS.deadLetterReason] === undefined;
  return {
    id: message.MessageId ?? '',
    envelope: envelopeOf(message),
    ...fields,
    ...(byPolicy
      ? { reason: 'maxReceiveCount exceeded (SQS redrive policy)', attempts: maxReceiveCount }
      : {}),
  };
}
