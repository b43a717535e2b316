import type { Source } from '../contracts/source.js';
import { ConfigError } from '../errors.js';

const DAY_MS = 86_400_000;

/**
 * How long the inbox remembers event ids by default: 4 days, longer than every built-in sender's
 * retry horizon (Stripe retries for up to 3 days). Only the inbox remembers ids that long; broker
 * dedupe windows are minutes.
 */
export const DEFAULT_INBOX_RETENTION_MS = 4 * DAY_MS;

const human = (ms: number): string =>
  ms >= DAY_MS
    ? `${+(ms / DAY_MS).toFixed(2)} d`
    : ms >= 3_600_000
      ? `${+(ms / 3_600_000).toFixed(2)} h`
      : `${+(ms / 1000).toFixed(1)} s`;

/**
 * Start-up check: the inbox must remember an id for longer than any sender keeps retrying it,
 * or a late retry of an accepted event would be accepted again. Throws `ConfigError` naming the
 * first source whose retry horizon the retention does not cover.
 *
 * @example
 * assertRetentionCovers({ retentionMs: 2 * 86_400_000, sources: { stripe: stripe({ secrets }) } });
 * // throws: inbox retention 2 d is shorter than source "stripe" (stripe) retries: …
 */
export function assertRetentionCovers(options: {
  readonly retentionMs: number;
  readonly sources: Readonly<Record<string, Source>>;
}): void {
  const { retentionMs, sources } = options;
  for (const [name, { preset }] of Object.entries(sources)) {
    if (retentionMs < preset.retryHorizonMs) {
      throw new ConfigError(
        `inbox retention ${human(retentionMs)} is shorter than source "${name}" (${preset.name}) ` +
          `retries: up to ${human(preset.retryHorizonMs)} (${preset.retryPolicy}). ` +
          `Keep inbox ids at least ${human(preset.retryHorizonMs)}, or a late retry would be accepted twice.`,
      );
    }
  }
}
