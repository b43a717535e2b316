import { z } from 'zod';
import { cloudEvents } from '../cloudevents/source.js';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { HandshakeResponse, IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { BadRequestError, SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DAY_MS, secretsSchema } from './config.js';
import { secretEquals } from './crypto.js';
import { requireEventId, requireType, toIso } from './event.js';
import { bodyText, isObject, stringField } from './json.js';

const VALIDATION = 'Microsoft.EventGrid.SubscriptionValidationEvent';

export const eventGridPreset: SenderPreset = Object.freeze({
  name: 'event-grid',
  scheme:
    'Azure Event Grid webhook: a secret in the endpoint URL (?code=) or a static Authorization: Bearer delivery header, compared in constant time (no signature)',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'body', field: 'id (each event of the batch)' } as const),
  handshake: `${VALIDATION}: answer {"validationResponse"}; CloudEvents schema: the OPTIONS abuse-protection handshake`,
  retryHorizonMs: DAY_MS,
  retryPolicy: 'exponential backoff, at most 30 attempts within the event time-to-live: 24 hours',
});

export interface EventGridConfig {
  /**
   * Secrets the subscription sends as `?code=<secret>` in its endpoint URL or as a static
   * `Authorization: Bearer <secret>` delivery property. List several while rotating: any may match.
   */
  secrets: readonly string[];
  /** The subscription's event schema. Default `eventgrid`. */
  schema?: 'eventgrid' | 'cloudevents' | undefined;
}

const configSchema = z.strictObject({
  secrets: secretsSchema,
  schema: z.enum(['eventgrid', 'cloudevents']).default('eventgrid'),
});

const BEARER = /^Bearer\s+(.+)$/i;

function assertSecret(request: IncomingWebhook, secrets: readonly string[]): void {
  const header = request.headers.authorization;
  const token =
    header === undefined ? request.url.searchParams.get('code') : BEARER.exec(header)?.[1]?.trim();
  let matched = false;
  for (const s of secrets) matched = (token != null && secretEquals(s, token)) || matched;
  if (!matched) throw new SignatureError('event grid: no valid ?code= or bearer secret');
}

/** The batch, once the secret passed: an array of Event Grid schema events. */
function batchOf(request: IncomingWebhook): Record<string, unknown>[] {
  const text = bodyText(request.body);
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every(isObject))
    throw new BadRequestError('event grid: the body is not a batch (a JSON array of events)');
  return parsed as Record<string, unknown>[];
}

/**
 * Azure Event Grid push delivery to a webhook. Event Grid signs nothing: the subscription carries a
 * secret in its endpoint URL (`?code=`) or as a static `Authorization: Bearer` delivery header,
 * compared here in constant time; Entra ID (JWT) delivery auth is not checked here.
 * - `schema: 'eventgrid'` (default): a batch is an array, each element one event: id = `id`, type
 *   = `eventType`, key = `subject`, occurredAt = `eventTime`, payload = the element's JSON.
 *   `handshake` answers the `SubscriptionValidationEvent` with its `validationCode`, once the
 *   secret passed.
 * - `schema: 'cloudevents'`: the CloudEvents source (`cloudEvents`), the OPTIONS handshake included.
 *
 * @example
 * const source = eventGrid({ secrets: [process.env.EVENT_GRID_SECRET!] });
 * // subscription endpoint: https://hooks.example.com/webhooks/azure?code=<secret>
 */
export function eventGrid(config: EventGridConfig): Source {
  const { secrets, schema } = parseConfig('event grid config', configSchema, config);
  if (schema === 'cloudevents') {
    // The secret is checked here (either form); the CloudEvents source then reads the events.
    const events = cloudEvents({
      unauthenticated: true,
      retryHorizonMs: eventGridPreset.retryHorizonMs,
    });
    return {
      preset: eventGridPreset,
      verifier: {
        handshake: (request, now) => events.verifier.handshake?.(request, now),
        verify(request, now) {
          assertSecret(request, secrets);
          return events.verifier.verify(request, now);
        },
      },
    };
  }
  return {
    preset: eventGridPreset,
    verifier: {
      handshake(request: IncomingWebhook): HandshakeResponse | undefined {
        if (!Buffer.from(request.body).includes(VALIDATION)) return undefined;
        try {
          assertSecret(request, secrets);
          const [first] = batchOf(request);
          const code = stringField(first, 'data.validationCode');
          if (first?.eventType !== VALIDATION || code === undefined) return undefined;
          return {
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ validationResponse: code }),
          };
        } catch {
          return undefined;
        }
      },
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        assertSecret(request, secrets);
        return batchOf(request).map((event) => {
          const type = requireType(stringField(event, 'eventType'), 'event grid', 'eventType');
          if (type === VALIDATION)
            throw new BadRequestError(`event grid: ${VALIDATION} is a handshake`);
          return {
            eventId: requireEventId(stringField(event, 'id'), 'event grid', 'id'),
            type,
            key: stringField(event, 'subject'),
            occurredAt: toIso(stringField(event, 'eventTime')),
            payload: new TextEncoder().encode(JSON.stringify(event)),
          };
        });
      },
    },
  };
}
