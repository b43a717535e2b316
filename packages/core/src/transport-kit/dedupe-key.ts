import type { OutgoingMessage } from '../contracts/transport.js';

/**
 * The broker dedupe key of a message: its explicit `dedupeKey`, else `<source>:<id>`. The source
 * is part of the default because two senders may use the same event id; the inbox and the
 * processed-guard key on (source, id) for the same reason. Adapters whose broker limits the key's
 * length (SQS: 128 characters) hash it there, not here.
 *
 * @example
 * const key = dedupeKeyOf({ envelope }); // 'stripe:evt_1'
 */
export function dedupeKeyOf(message: OutgoingMessage): string {
  return message.dedupeKey ?? `${message.envelope.source}:${message.envelope.id}`;
}
