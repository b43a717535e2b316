import { CommandLineError } from './command-line-error.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Parses `500ms`, `45s`, `15m`, `12h`, `30d`, `2w` and sums like `1d12h` into milliseconds.
 * Throws `CommandLineError` on anything else, including zero.
 *
 * @example
 * parseDuration('30d'); // 2_592_000_000
 */
export function parseDuration(text: string, flag = 'duration'): number {
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)];
  const whole = parts.map((p) => p[0]).join('');
  if (parts.length === 0 || whole !== text) {
    throw new CommandLineError(
      `${flag}: "${text}" is not a duration (e.g. 45s, 15m, 12h, 30d, 1d12h)`,
    );
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_MS[p[2] ?? ''] ?? 0), 0);
  if (ms <= 0) throw new CommandLineError(`${flag}: must be longer than zero`);
  return ms;
}

/**
 * Parses an ISO-8601 date or date-time (`2025-03-01`, `2025-03-01T12:00:00Z`). A value without a
 * zone is read as UTC, so the same command means the same instant on every operator's machine.
 */
export function parseInstant(text: string, flag: string): Date {
  const iso = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
  const m = iso.exec(text);
  if (!m)
    throw new CommandLineError(
      `${flag}: "${text}" is not an ISO-8601 date (e.g. 2025-03-01T12:00:00Z)`,
    );
  const zoned = m[1] === undefined || m[4] !== undefined ? text : `${text}Z`;
  const date = new Date(zoned);
  if (Number.isNaN(date.getTime()))
    throw new CommandLineError(`${flag}: "${text}" is not a valid date`);
  return date;
}

/**
 * `--since` and `--until`: an ISO-8601 instant (`parseInstant`), or a duration meaning that long
 * before `now` (`2h`, `7d`, `1d12h`).
 *
 * @example
 * parseWhen('2h', '--since', new Date('2025-03-01T12:00:00Z')); // 2025-03-01T10:00:00Z
 */
export function parseWhen(text: string, flag: string, now: Date): Date {
  if (/^\d+(ms|s|m|h|d|w)/.test(text)) return new Date(now.getTime() - parseDuration(text, flag));
  if (/^\d{4}-/.test(text)) return parseInstant(text, flag);
  throw new CommandLineError(
    `${flag}: "${text}" is not an ISO-8601 date or a duration ago (e.g. 2025-03-01T12:00:00Z, 2h, 7d)`,
  );
}
