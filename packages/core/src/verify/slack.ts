import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { HandshakeResponse, IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { BadRequestError } from '../errors.js';
import { DEFAULT_TOLERANCE_SEC, HOUR_MS, secretsSchema, toleranceSchema } from './config.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { requireEventId, requireType, unixSecondsToIso } from './event.js';
import { type JsonObject, parseVerifiedJson, stringField } from './json.js';
import { assertV0Signature } from './v0-signature.js';

export const slackPreset: SenderPreset = Object.freeze({
  name: 'slack',
  scheme:
    'HMAC-SHA256(signing secret, "v0:" + X-Slack-Request-Timestamp + ":" + body), hex, header X-Slack-Signature: v0=…',
  toleranceSec: DEFAULT_TOLERANCE_SEC,
  eventId: Object.freeze({ from: 'body', field: 'event_id' } as const),
  handshake: 'url_verification: answer {"challenge"} once the signature passed (Slack signs it)',
  retryHorizonMs: HOUR_MS,
  retryPolicy:
    'Events API: up to 3 retries with backoff, marked X-Slack-Retry-Num / X-Slack-Retry-Reason; 1 h horizon kept as a margin',
});

export interface SlackConfig {
  /** App signing secrets. List several while rotating: any may match. */
  secrets: readonly string[];
  /** Largest accepted distance between X-Slack-Request-Timestamp and now, either way, in seconds. Default 300. */
  toleranceSec?: number | undefined;
}

const schema = z.strictObject({ secrets: secretsSchema, toleranceSec: toleranceSchema });
/** Bytes every url_verification body contains; other bodies skip the handshake's signature check. */
const HANDSHAKE_MARKER = 'url_verification';

const HEADERS = { signature: 'x-slack-signature', timestamp: 'x-slack-request-timestamp' };

/** Checks X-Slack-Signature and the timestamp, then parses. Nothing is parsed before both pass. */
function verifiedBody(
  request: IncomingWebhook,
  now: Date,
  secrets: readonly string[],
  toleranceSec: number,
): JsonObject {
  assertV0Signature(request, now, secrets, toleranceSec, HEADERS);
  return parseVerifiedJson(request.body, 'slack');
}

/**
 * Slack Events API. Verifies `X-Slack-Signature` (v0) over timestamp and raw body with every
 * configured secret and rejects a timestamp more than `toleranceSec` away (either way); then
 * id = `event_id`, type = `event.type` (else `type`), key = `event.channel` (else `team_id`),
 * occurredAt = `event_time`. JSON bodies only: slash commands and interactivity are not events.
 *
 * `handshake(request, now?)` answers `url_verification` with `{"challenge"}`, only after the
 * signature and timestamp passed; for anything else (a bad signature included) it returns
 * undefined and leaves the decision, and the 401, to `verify`.
 *
 * @example
 * const source = slack({ secrets: [process.env.SLACK_SIGNING_SECRET!] });
 * const answer = source.verifier.handshake?.(request); // { status: 200, body: '{"challenge":"…"}' }
 */
export function slack(config: SlackConfig): Source {
  const { secrets, toleranceSec } = parseConfig('slack config', schema, config);
  return {
    preset: { ...slackPreset, toleranceSec },
    verifier: {
      // The Verifier contract passes no clock to handshake; the receiver's own clock is used then.
      handshake(request: IncomingWebhook, now: Date = new Date()): HandshakeResponse | undefined {
        if (!Buffer.from(request.body).includes(HANDSHAKE_MARKER)) return undefined;
        let body: JsonObject;
        try {
          body = verifiedBody(request, now, secrets, toleranceSec);
        } catch {
          return undefined;
        }
        const challenge = stringField(body, 'challenge');
        if (body.type !== HANDSHAKE_MARKER || challenge === undefined) return undefined;
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ challenge }),
        };
      },
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const body = verifiedBody(request, now, secrets, toleranceSec);
        if (body.type === HANDSHAKE_MARKER) {
          throw new BadRequestError(
            'slack: url_verification is a handshake; answer it with handshake()',
          );
        }
        return [
          {
            eventId: requireEventId(stringField(body, 'event_id'), 'slack', 'body.event_id'),
            type: requireType(
              stringField(body, 'event.type') ?? stringField(body, 'type'),
              'slack',
              'body.event.type',
            ),
            key: stringField(body, 'event.channel') ?? stringField(body, 'team_id'),
            occurredAt: unixSecondsToIso(body.event_time),
          },
        ];
      },
    },
  };
}
