import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { BadRequestError, SignatureError } from '../errors.js';
import { DAY_MS, secretsSchema } from './config.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireEventId, requireType } from './event.js';
import { bodyText, type JsonObject, parseVerifiedJson, stringField } from './json.js';
import { optionalHeader, requireHeader } from './request.js';

export const githubPreset: SenderPreset = Object.freeze({
  name: 'github',
  scheme: 'HMAC-SHA256(secret, body), hex, header X-Hub-Signature-256: sha256=…',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'header', field: 'X-GitHub-Delivery' } as const),
  retryHorizonMs: 3 * DAY_MS,
  retryPolicy:
    'no automatic retries; deliveries from the past 3 days can be redelivered by hand or through the REST API',
});

export interface GithubConfig {
  /** Webhook secrets. List several while rotating: any may match. */
  secrets: readonly string[];
}

const schema = z.strictObject({ secrets: secretsSchema });
const PREFIX = 'sha256=';

/** GitHub sends JSON, or `payload=<json>` when the hook's content type is form-encoded. */
function parseBody(request: IncomingWebhook): JsonObject {
  const contentType = optionalHeader(request, 'content-type') ?? '';
  if (!contentType.startsWith('application/x-www-form-urlencoded')) {
    return parseVerifiedJson(request.body, 'github');
  }
  const payload = new URLSearchParams(bodyText(request.body) ?? '').get('payload');
  if (payload === null) throw new BadRequestError('github: form body has no payload field');
  return parseVerifiedJson(Buffer.from(payload, 'utf8'), 'github');
}

/**
 * GitHub webhooks. Verifies `X-Hub-Signature-256` over the raw body with every configured secret;
 * id = `X-GitHub-Delivery`, type = `X-GitHub-Event` (+ `.action`), key = `repository.full_name`.
 *
 * Limits, as GitHub designed them: the signature covers no timestamp and not the delivery header,
 * so a captured delivery can be replayed, and replayed under a new `X-GitHub-Delivery` that the
 * inbox will not recognise. Keep the endpoint on HTTPS and handlers idempotent on business keys.
 *
 * @example
 * const source = github({ secrets: [process.env.GITHUB_WEBHOOK_SECRET!] });
 * const [event] = source.verifier.verify(request, new Date()); // event.type === 'issues.opened'
 */
export function github(config: GithubConfig): Source {
  const { secrets } = parseConfig('github config', schema, config);
  return {
    preset: githubPreset,
    verifier: {
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        const header = requireHeader(request, 'x-hub-signature-256');
        const digest = header.startsWith(PREFIX)
          ? decodeDigest(header.slice(PREFIX.length), 'hex')
          : undefined;
        const expected = secrets.map((s) => hmacDigest(s, [request.body]));
        if (!anyDigestMatches(expected, [digest])) {
          throw new SignatureError('X-Hub-Signature-256 does not match the body');
        }
        const eventId = requireEventId(
          optionalHeader(request, 'x-github-delivery'),
          'github',
          'X-GitHub-Delivery',
        );
        const event = requireType(
          optionalHeader(request, 'x-github-event'),
          'github',
          'X-GitHub-Event',
        );
        const body = parseBody(request);
        const action = stringField(body, 'action');
        return [
          {
            eventId,
            type: action === undefined ? event : `${event}.${action}`,
            key: stringField(body, 'repository.full_name'),
          },
        ];
      },
    },
  };
}
