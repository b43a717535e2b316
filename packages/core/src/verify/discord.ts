import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { HandshakeResponse, IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { BadRequestError, SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DEFAULT_TOLERANCE_SEC, HOUR_MS, toleranceSchema } from './config.js';
import { decodeDigest, sha256Hex } from './crypto.js';
import { ed25519PublicKey, anyEd25519Matches } from './ed25519.js';
import { requireEventId, requireType, toIso } from './event.js';
import { canonicalJson, field, type JsonObject, parseVerifiedJson, stringField } from './json.js';
import { assertFresh, parseUnixSeconds, requireHeader } from './request.js';

export const discordPreset: SenderPreset = Object.freeze({
  name: 'discord',
  scheme:
    'Ed25519(application public key) over X-Signature-Timestamp + body, hex, header X-Signature-Ed25519',
  toleranceSec: DEFAULT_TOLERANCE_SEC,
  eventId: Object.freeze({
    from: 'body',
    field: 'id (interactions) / event.type + timestamp + data (webhook events)',
  } as const),
  handshake:
    'PING: interactions type 1 answered {"type":1}, webhook events type 0 answered 204, once the signature passed',
  retryHorizonMs: HOUR_MS,
  retryPolicy:
    'webhook events: retried for a short while on failure, then the endpoint is disabled (no horizon documented; 1 h kept as a margin)',
});

export interface DiscordConfig {
  /** The application's public keys (64 hex characters, from the developer portal): any may match. */
  publicKeys: readonly string[];
  /** Largest accepted distance between X-Signature-Timestamp and now, either way, in seconds. Default 300. */
  toleranceSec?: number | undefined;
}

const schema = z.strictObject({
  publicKeys: z
    .array(z.string().regex(/^[0-9a-fA-F]{64}$/, 'an Ed25519 public key is 64 hex characters'))
    .min(1),
  toleranceSec: toleranceSchema,
});

/** Interaction types by number (Discord's `InteractionType`). */
const INTERACTIONS: Record<number, string> = {
  2: 'interaction.application_command',
  3: 'interaction.message_component',
  4: 'interaction.application_command_autocomplete',
  5: 'interaction.modal_submit',
};

/**
 * Discord (and any sender signing with Ed25519 the same way): verifies `X-Signature-Ed25519` over
 * `X-Signature-Timestamp` + raw body with every configured public key and rejects a timestamp
 * more than `toleranceSec` away. Two kinds of body:
 * - webhook events (`{ version, type: 1, event: { type, timestamp, data } }`): type = `event.type`,
 *   id = `<event.type>:<event.timestamp>:<hash of data>` (the event has no id of its own), key =
 *   `application_id`;
 * - interactions (`{ id, type: 2…5 }`): id = `id`, type = `interaction.<kind>`, key = `channel_id`
 *   (else `guild_id`).
 *
 * `handshake` answers the PINGs (interactions type 1 with `{"type":1}`, webhook events type 0
 * with 204), only after the signature passed.
 *
 * Limit: an interaction wants its reply in the HTTP answer within 3 s; the receiver answers 202
 * with no body, so route interactions that need a reply to your own handler and queue only what
 * can be handled later.
 *
 * @example
 * const source = discord({ publicKeys: [process.env.DISCORD_PUBLIC_KEY!] });
 */
export function discord(config: DiscordConfig): Source {
  const { publicKeys, toleranceSec } = parseConfig('discord config', schema, config);
  const keys = publicKeys.flatMap((k) => ed25519PublicKey(k) ?? []);
  // The receiver asks `handshake` first, then `verify`, with the same request: one signature
  // check serves both.
  const checked = new WeakMap<IncomingWebhook, JsonObject>();
  const verified = (request: IncomingWebhook, now: Date): JsonObject => {
    const known = checked.get(request);
    if (known !== undefined) return known;
    const signature = decodeDigest(requireHeader(request, 'x-signature-ed25519'), 'hex');
    const timestamp = requireHeader(request, 'x-signature-timestamp');
    if (!anyEd25519Matches(keys, [timestamp, request.body], signature))
      throw new SignatureError('X-Signature-Ed25519 does not match the body');
    assertFresh(parseUnixSeconds(timestamp, 'X-Signature-Timestamp'), now, toleranceSec);
    const body = parseVerifiedJson(request.body, 'discord');
    checked.set(request, body);
    return body;
  };
  const isPing = (body: JsonObject) =>
    (body.type === 1 && body.event === undefined && body.version === undefined) ||
    (body.type === 0 && body.version !== undefined);
  return {
    preset: { ...discordPreset, toleranceSec },
    verifier: {
      handshake(request: IncomingWebhook, now: Date = new Date()): HandshakeResponse | undefined {
        let body: JsonObject;
        try {
          body = verified(request, now);
        } catch {
          return undefined;
        }
        if (!isPing(body)) return undefined;
        return body.type === 1
          ? { status: 200, headers: { 'content-type': 'application/json' }, body: '{"type":1}' }
          : { status: 204, headers: {}, body: '' };
      },
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const body = verified(request, now);
        if (isPing(body))
          throw new BadRequestError('discord: PING is a handshake; answer it with handshake()');
        const event = field(body, 'event');
        if (event !== undefined) {
          const type = requireType(stringField(event, 'type'), 'discord', 'body.event.type');
          const at = stringField(event, 'timestamp');
          const data = sha256Hex(canonicalJson(field(event, 'data') ?? null)).slice(0, 32);
          return [
            {
              eventId: `${type}:${at ?? ''}:${data}`,
              type,
              key: stringField(body, 'application_id'),
              occurredAt: toIso(at),
            },
          ];
        }
        const kind = typeof body.type === 'number' ? INTERACTIONS[body.type] : undefined;
        return [
          {
            eventId: requireEventId(stringField(body, 'id'), 'discord', 'body.id'),
            type: requireType(kind, 'discord', 'body.type'),
            key: stringField(body, 'channel_id') ?? stringField(body, 'guild_id'),
          },
        ];
      },
    },
  };
}
