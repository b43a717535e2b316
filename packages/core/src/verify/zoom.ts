import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { HandshakeResponse, IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { BadRequestError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DEFAULT_TOLERANCE_SEC, HOUR_MS, secretsSchema, toleranceSchema } from './config.js';
import { hmacDigest } from './crypto.js';
import { requireType } from './event.js';
import { field, idField, type JsonObject, parseVerifiedJson, stringField } from './json.js';
import { assertV0Signature } from './v0-signature.js';

const VALIDATION = 'endpoint.url_validation';

export const zoomPreset: SenderPreset = Object.freeze({
  name: 'zoom',
  scheme:
    'HMAC-SHA256(secret token, "v0:" + x-zm-request-timestamp + ":" + body), hex, header x-zm-signature: v0=…',
  toleranceSec: DEFAULT_TOLERANCE_SEC,
  eventId: Object.freeze({
    from: 'body',
    field: 'event + event_ts + payload.object.uuid|id',
  } as const),
  handshake: `${VALIDATION}: answer {"plainToken","encryptedToken"} once the signature passed (Zoom signs it)`,
  retryHorizonMs: 3 * HOUR_MS,
  retryPolicy: '3 retries, 5, 30 and 90 minutes after the first attempt, with the same body',
});

export interface ZoomConfig {
  /** The app's webhook secret tokens. List several while rotating: any may match. */
  secrets: readonly string[];
  /** Largest accepted distance between x-zm-request-timestamp and now, either way, in seconds. Default 300. */
  toleranceSec?: number | undefined;
}

const schema = z.strictObject({ secrets: secretsSchema, toleranceSec: toleranceSchema });
const HEADERS = { signature: 'x-zm-signature', timestamp: 'x-zm-request-timestamp' };

/**
 * Zoom webhooks (Meetings, Phone, Team Chat, … event subscriptions). Verifies `x-zm-signature`
 * (v0) over the timestamp and raw body with every configured secret token and rejects a timestamp
 * more than `toleranceSec` away. Zoom sends no event id: id = `<event>:<event_ts>:<object>` (the
 * retries carry the same body), type = `event`, key = `payload.object.uuid` / `id`, occurredAt =
 * `event_ts` (ms).
 *
 * `handshake` answers `endpoint.url_validation` with `plainToken` and its `encryptedToken`
 * (HMAC-SHA256 with the first secret token), only after the signature passed.
 *
 * @example
 * const source = zoom({ secrets: [process.env.ZOOM_WEBHOOK_SECRET_TOKEN!] });
 */
export function zoom(config: ZoomConfig): Source {
  const { secrets, toleranceSec } = parseConfig('zoom config', schema, config);
  const verified = (request: IncomingWebhook, now: Date): JsonObject => {
    assertV0Signature(request, now, secrets, toleranceSec, HEADERS);
    return parseVerifiedJson(request.body, 'zoom');
  };
  return {
    preset: { ...zoomPreset, toleranceSec },
    verifier: {
      handshake(request: IncomingWebhook, now: Date = new Date()): HandshakeResponse | undefined {
        if (!Buffer.from(request.body).includes(VALIDATION)) return undefined;
        let body: JsonObject;
        try {
          body = verified(request, now);
        } catch {
          return undefined;
        }
        const plainToken = stringField(body, 'payload.plainToken');
        if (body.event !== VALIDATION || plainToken === undefined) return undefined;
        // Zoom checks the answer against the token it holds now: the first configured one.
        const encryptedToken = hmacDigest(secrets[0] ?? '', [plainToken]).toString('hex');
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ plainToken, encryptedToken }),
        };
      },
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const body = verified(request, now);
        const type = requireType(stringField(body, 'event'), 'zoom', 'body.event');
        if (type === VALIDATION)
          throw new BadRequestError(
            `zoom: ${VALIDATION} is a handshake; answer it with handshake()`,
          );
        const object = field(field(body, 'payload'), 'object');
        const objectId = stringField(object, 'uuid') ?? idField(object, 'id');
        const ts = typeof body.event_ts === 'number' ? body.event_ts : undefined;
        if (ts === undefined) throw new BadRequestError('zoom: verified request has no event_ts');
        return [
          {
            eventId: `${type}:${ts}:${objectId ?? ''}`,
            type,
            key: objectId,
            occurredAt: new Date(ts).toISOString(),
          },
        ];
      },
    },
  };
}
