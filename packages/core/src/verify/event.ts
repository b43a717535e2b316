import { BadRequestError } from '../errors.js';
import { isoFormatter } from '../iso-time.js';

/** Sender timestamps arrive in bursts within one second: the formatter reuses its prefix. */
const secondsIso = isoFormatter();

/** The event id, or `BadRequestError` (400): a verified request without an id cannot be deduped. */
export function requireEventId(id: string | undefined, sender: string, where: string): string {
  if (id === undefined) {
    throw new BadRequestError(`${sender}: verified request has no event id (${where})`);
  }
  return id;
}

/** The event type, or `BadRequestError` (400): without it no handler can be chosen. */
export function requireType(type: string | undefined, sender: string, where: string): string {
  if (type === undefined) {
    throw new BadRequestError(`${sender}: verified request has no event type (${where})`);
  }
  return type;
}

/** Unix seconds (number or digit string) as ISO-8601; undefined for anything else. */
export function unixSecondsToIso(value: unknown): string | undefined {
  const seconds =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isFinite(seconds) || seconds < 0) return undefined;
  const ms = seconds * 1000;
  return ms > 8.64e15 ? undefined : secondsIso(ms); // past the Date range: no time
}

/** A date-time string normalised to ISO-8601 (UTC); undefined when it does not parse. */
export function toIso(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
