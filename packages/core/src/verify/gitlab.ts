import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DAY_MS, secretsSchema } from './config.js';
import { secretEquals } from './crypto.js';
import { requireEventId, requireType } from './event.js';
import { idField, parseVerifiedJson, stringField } from './json.js';
import { optionalHeader, requireHeader } from './request.js';

export const gitlabPreset: SenderPreset = Object.freeze({
  name: 'gitlab',
  scheme: 'shared secret token, compared in constant time, header X-Gitlab-Token (no signature)',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'header', field: 'Idempotency-Key' } as const),
  retryHorizonMs: 2 * DAY_MS,
  retryPolicy:
    "no automatic retries; a failed request can be resent by hand from the webhook's recent events, kept 2 days",
});

export interface GitlabConfig {
  /** The webhook's secret tokens. List several while rotating: any may match. */
  secrets: readonly string[];
}

const schema = z.strictObject({ secrets: secretsSchema });

/**
 * GitLab webhooks. Compares `X-Gitlab-Token` with every configured token in constant time; id =
 * `Idempotency-Key` (the same on every resend), else `X-Gitlab-Event-UUID`; type = `object_kind`
 * (`push`, `merge_request`, …), else `event_name`; key = `project.path_with_namespace`, else
 * `project.id`.
 *
 * Limit: the token is a shared secret, not a signature over the body: use HTTPS only, and treat a
 * leaked token as a leaked key.
 *
 * @example
 * const source = gitlab({ secrets: [process.env.GITLAB_WEBHOOK_TOKEN!] });
 */
export function gitlab(config: GitlabConfig): Source {
  const { secrets } = parseConfig('gitlab config', schema, config);
  return {
    preset: gitlabPreset,
    verifier: {
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        const token = requireHeader(request, 'x-gitlab-token');
        let matched = false;
        for (const secret of secrets) if (secretEquals(secret, token)) matched = true;
        if (!matched) throw new SignatureError('X-Gitlab-Token matches no configured token');
        const body = parseVerifiedJson(request.body, 'gitlab');
        return [
          {
            eventId: requireEventId(
              optionalHeader(request, 'idempotency-key') ??
                optionalHeader(request, 'x-gitlab-event-uuid'),
              'gitlab',
              'Idempotency-Key / X-Gitlab-Event-UUID',
            ),
            type: requireType(
              stringField(body, 'object_kind') ?? stringField(body, 'event_name'),
              'gitlab',
              'body.object_kind',
            ),
            key: stringField(body, 'project.path_with_namespace') ?? idField(body, 'project.id'),
          },
        ];
      },
    },
  };
}
