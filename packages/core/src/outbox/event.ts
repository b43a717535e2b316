import { randomUUID } from 'node:crypto';
import type { OutboxEvent } from '../contracts/outbox.js';
import { createEnvelope, type Envelope } from '../envelope.js';
import { UsageError } from '../errors.js';

const FIELDS = ['source', 'type'] as const;

/**
 * The envelope an outbox store writes for `event`: its `id` when given, else a random UUID,
 * chosen here once and stored, so every re-send carries the same id, bytes and hash.
 * `receivedAt` is the time of the add. Throws `UsageError` for a missing `source` or `type`, or
 * an `id` or `key` that is not a non-empty string.
 *
 * @example
 * const envelope = outboxEnvelope({ source: 'orders', type: 'order.paid', key: 'ord_1', payload: { total: 42 } });
 */
export function outboxEnvelope(event: OutboxEvent): Envelope {
  if (typeof event !== 'object' || event === null) {
    throw new UsageError(
      `outbox.add: expected an event { source, type, payload, … }, got ${event}`,
    );
  }
  for (const field of FIELDS) {
    const value: unknown = event[field];
    if (typeof value !== 'string' || value === '') {
      throw new UsageError(
        `outbox.add: event.${field} must be a non-empty string, got ${JSON.stringify(value) ?? 'undefined'}`,
      );
    }
  }
  for (const field of ['id', 'key'] as const) {
    const value: unknown = event[field];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new UsageError(
        `outbox.add: event.${field} must be a non-empty string when given, got ${JSON.stringify(value)}`,
      );
    }
  }
  return createEnvelope({ ...event, id: event.id ?? randomUUID() });
}
