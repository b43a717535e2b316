import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { HandshakeResponse, IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { HOUR_MS } from './config.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { secretEquals, sha256Hex } from './crypto.js';
import { requireType } from './event.js';
import { canonicalJson, isObject, type JsonObject, stringField, tryParseJson } from './json.js';

export const msgraphPreset: SenderPreset = Object.freeze({
  name: 'msgraph',
  scheme:
    'no signature: every notification carries the subscription clientState, compared in constant time',
  toleranceSec: null,
  eventId: Object.freeze({
    from: 'body',
    field: 'sha-256 of each value[] item (derived: Graph sends no event id)',
  } as const),
  handshake: 'validationToken query parameter: echo it, decoded, as 200 text/plain within 10 s',
  retryHorizonMs: 4 * HOUR_MS,
  retryPolicy: 'undelivered notifications are retried with exponential backoff for up to 4 hours',
});

export interface MsgraphConfig {
  /** The clientState values given when creating subscriptions. List several while rotating: any may match. */
  clientStates: readonly string[];
}

const schema = z.strictObject({
  clientStates: z
    .array(
      z.string().min(1, 'a clientState is empty').max(255, 'Graph keeps at most 255 characters'),
    )
    .min(1, 'at least one clientState (list several while rotating)'),
});

/** True when the item's clientState equals a configured one. Compares with all of them, no early exit. */
function clientStateMatches(item: JsonObject, clientStates: readonly string[]): boolean {
  const got = typeof item.clientState === 'string' ? item.clientState : '';
  let matched = false;
  for (const want of clientStates) matched = secretEquals(want, got) || matched;
  return matched && got !== '';
}

/**
 * One notification as its own event. Graph sends no event or delivery id, so the id is the sha-256
 * of the item's canonical JSON (sorted keys, no whitespace): a retry of the same notification gets
 * the same id, however Graph batches or formats it. The limit: two notifications with identical
 * content (same subscription, change type, resource and resourceData, e.g. no changing etag) also
 * share an id, so inside the inbox retention a later identical notification is taken for a retry.
 * Handlers should read current state (a delta query), not count on one notification per change.
 */
function toEvent(item: JsonObject): VerifiedEvent {
  const bytes = Buffer.from(canonicalJson(item), 'utf8');
  const lifecycle = stringField(item, 'lifecycleEvent');
  return {
    eventId: sha256Hex(bytes),
    type: requireType(
      stringField(item, 'changeType') ?? (lifecycle && `lifecycle.${lifecycle}`),
      'msgraph',
      'value[].changeType',
    ),
    key: stringField(item, 'resource'),
    payload: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  };
}

/**
 * Microsoft Graph change notifications (webhook delivery). `handshake` answers the subscription
 * validation request (`?validationToken=…`) with the decoded token as text/plain, without reading
 * the body. `verify` returns one event per item of `value`, after every item's `clientState` matched
 * a configured one in constant time; a single mismatch rejects the whole request (401).
 *
 * Graph has no signature for basic notifications, so unlike the other senders the body must be
 * parsed before anything is authenticated: clientState lives inside it. Parsing is the only work
 * done on unauthenticated input. The JWTs (`validationTokens`) of rich notifications are not checked.
 * Lifecycle notifications get type `lifecycle.<lifecycleEvent>`.
 *
 * @example
 * const source = msgraph({ clientStates: [process.env.GRAPH_CLIENT_STATE!] });
 * const events = source.verifier.verify(request, new Date()); // one per notification in `value`
 */
export function msgraph(config: MsgraphConfig): Source {
  const { clientStates } = parseConfig('msgraph config', schema, config);
  return {
    preset: msgraphPreset,
    verifier: {
      handshake(request: IncomingWebhook): HandshakeResponse | undefined {
        const token = request.url.searchParams.get('validationToken');
        if (token === null) return undefined;
        // The token is reflected as is: text/plain and nosniff keep it inert in a browser.
        const headers = {
          'content-type': 'text/plain; charset=utf-8',
          'x-content-type-options': 'nosniff',
        };
        return token === ''
          ? { status: 400, headers, body: 'empty validationToken' }
          : { status: 200, headers, body: token };
      },
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        const items = tryParseJson(request.body)?.value;
        if (!Array.isArray(items) || items.length === 0 || !items.every(isObject)) {
          throw new SignatureError('msgraph: body has no notifications to authenticate');
        }
        if (!items.every((item) => clientStateMatches(item, clientStates))) {
          throw new SignatureError('msgraph: a notification has a wrong or missing clientState');
        }
        return items.map(toEvent);
      },
    },
  };
}
