import { userInfo } from 'node:os';
import {
  type DeadLetterSelection,
  EVENT_STATES,
  type EventState,
  isEventState,
  type RecordFilter,
} from '@onceflow/core';
import { decodeCursor } from '@onceflow/core/kit';
import { CommandLineError } from './command-line-error.js';
import { parseDuration } from './duration.js';

/** The filter flags, as `parseArgs` returns them. */
export interface FilterFlags {
  readonly state?: string | undefined;
  readonly source?: string | undefined;
  readonly type?: string | undefined;
  readonly reason?: string | undefined;
  readonly 'older-than'?: string | undefined;
  readonly 'newer-than'?: string | undefined;
}

/** `--state`: one of the record's states. */
export function parseState(text: string): EventState {
  if (!isEventState(text))
    throw new CommandLineError(`--state: "${text}" is not a state (${EVENT_STATES.join(', ')})`);
  return text;
}

/**
 * The record filter the flags give: `--older-than`/`--newer-than` are ages of the last state
 * change, measured from `now`. Only the flags given appear, so a filter of none is `{}`.
 */
export function parseFilter(flags: FilterFlags, now: Date): RecordFilter {
  const ago = (text: string, flag: string) =>
    new Date(now.getTime() - parseDuration(text, `--${flag}`));
  const older = flags['older-than'];
  const newer = flags['newer-than'];
  const filter: RecordFilter = {
    ...(flags.state === undefined ? {} : { state: parseState(flags.state) }),
    ...(flags.source === undefined ? {} : { source: flags.source }),
    ...(flags.type === undefined ? {} : { type: flags.type }),
    ...(flags.reason === undefined ? {} : { reason: flags.reason }),
    ...(older === undefined ? {} : { updatedBefore: ago(older, 'older-than') }),
    ...(newer === undefined ? {} : { updatedAfter: ago(newer, 'newer-than') }),
  };
  if (filter.updatedBefore && filter.updatedAfter && filter.updatedAfter >= filter.updatedBefore)
    throw new CommandLineError('--newer-than must be longer than --older-than');
  return filter;
}

/** `--cursor`: a `next` a listing printed. */
export function parseCursor(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    decodeCursor(text);
  } catch {
    throw new CommandLineError(`--cursor: "${text}" is not a cursor a listing printed`);
  }
  return text;
}

/** `<source>/<id>`: the source is up to the first `/`, so an id may contain more. */
export function parseRecordId(text: string): { source: string; id: string } {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1)
    throw new CommandLineError(`"${text}" is not <source>/<id> (e.g. stripe/evt_1)`);
  return { source: text.slice(0, slash), id: text.slice(slash + 1) };
}

/**
 * Which dead letters a redrive or purge acts on: the `<source>/<id>` positionals, or the filter
 * flags, or `--all`; exactly one of the three.
 */
export function parseSelection(
  name: string,
  positionals: readonly string[],
  filter: RecordFilter,
  all: boolean,
  limit: number | undefined,
): DeadLetterSelection {
  const filtered = Object.keys(filter).length > 0;
  const given = [positionals.length > 0, filtered, all].filter(Boolean).length;
  if (given === 0)
    throw new CommandLineError(`${name}: give <source>/<id>..., filters (--source, …) or --all`);
  if (given > 1) throw new CommandLineError(`${name}: give ids, filters or --all, one of them`);
  if (positionals.length > 0) {
    const unique = new Map(positionals.map((p) => [p, parseRecordId(p)]));
    return { ids: [...unique.values()], limit };
  }
  return { filter, limit };
}

/** `--rate`: most records per second, `50` or `50/s` (fractions allowed: `0.5`). */
export function parseRate(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(text);
  const rate = m ? Number(m[1]) : Number.NaN;
  if (!(rate > 0)) throw new CommandLineError(`--rate: "${text}" is not a rate (e.g. 50 or 50/s)`);
  return rate;
}

/** `--actor`, or `cli:<os user>`: who acted, in each record's history. */
export function parseActor(text: string | undefined): string {
  if (text === undefined) return `cli:${osUser()}`;
  if (text.length === 0 || text.length > 200 || /\p{Cc}/u.test(text))
    throw new CommandLineError('--actor: 1 to 200 characters, no control characters');
  return text;
}

function osUser(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    // No passwd entry for the uid (some containers): say so rather than guess.
    return 'unknown';
  }
}
