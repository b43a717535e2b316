import { UsageError } from '../errors.js';
import type { HandlerContext } from '../worker/context.js';

/**
 * Where an event stands in its aggregate's order, for `applyIfNewer` in the PostgreSQL and
 * embedded stores. Either a `version` (or sequence number: a non-negative safe integer or bigint,
 * higher is newer; an equal version is not newer, so a redelivery is stale), or `occurredAt` with
 * a declared `tieBreak` (usually the event id): newer when later, or equally late with a greater
 * `tieBreak` (compared as strings, by code unit). Use one of the two per aggregate.
 *
 * `ctx`, when given, is noted when the event is stale (`ctx.note`), so the worker records the
 * skip on the event's record.
 */
export type AppliedPosition = (
  | { readonly aggregate: string; readonly version: number | bigint }
  | {
      readonly aggregate: string;
      readonly occurredAt: Date | string;
      readonly tieBreak: string;
    }
) & { readonly ctx?: Pick<HandlerContext, 'note'> | undefined };

/** A position as the stores compare it: `(version, tie)` in that order. */
export interface Position {
  readonly aggregate: string;
  /** The version, or `occurredAt` in ms since the epoch. */
  readonly version: bigint;
  /** `''` for versions; the `tieBreak` for `occurredAt`. */
  readonly tie: string;
  readonly kind: 'version' | 'occurredAt';
}

const MAX = 2n ** 63n - 1n;

function fail(what: string, value: unknown): never {
  throw new UsageError(`applyIfNewer: ${what}, got ${JSON.stringify(value) ?? String(value)}`);
}

/**
 * Checks what a handler passed to `applyIfNewer` and turns it into the `(version, tie)` pair the
 * stores compare. Throws `UsageError` for anything that can never be compared.
 *
 * @example
 * toPosition({ aggregate: 'order:1', version: 7 }); // { aggregate: 'order:1', version: 7n, tie: '', kind: 'version' }
 */
export function toPosition(input: AppliedPosition): Position {
  if (typeof input !== 'object' || input === null) fail('expected { aggregate, version }', input);
  const { aggregate } = input;
  if (typeof aggregate !== 'string' || aggregate === '') {
    fail('aggregate must be a non-empty string', aggregate);
  }
  if ('version' in input) {
    const v = input.version;
    const ok =
      (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) ||
      (typeof v === 'bigint' && v >= 0n && v <= MAX);
    if (!ok) fail('version must be a non-negative integer', typeof v === 'bigint' ? `${v}` : v);
    return { aggregate, version: BigInt(v), tie: '', kind: 'version' };
  }
  if (!('occurredAt' in input)) fail('expected a version or occurredAt with a tieBreak', input);
  const ms = new Date(input.occurredAt).getTime();
  if (!Number.isFinite(ms) || ms < 0)
    fail('occurredAt must be a date after 1970', input.occurredAt);
  if (typeof input.tieBreak !== 'string') {
    fail('occurredAt needs a tieBreak string (the event id)', input.tieBreak);
  }
  return { aggregate, version: BigInt(ms), tie: input.tieBreak, kind: 'occurredAt' };
}

function label(kind: Position['kind'], version: bigint, tie: string): string {
  if (kind === 'version') return `version ${version}`;
  return `occurredAt ${new Date(Number(version)).toISOString()} (${tie})`;
}

/**
 * The note a stale event's record gets: what it carried and what was applied already.
 *
 * @example
 * staleNote(toPosition({ aggregate: 'order:1', version: 5 }), { version: 7n, tie: '' });
 * // 'stale: version 5 ≤ version 7 applied for order:1'
 */
export function staleNote(
  position: Position,
  applied: { readonly version: bigint; readonly tie: string },
): string {
  const { kind, aggregate } = position;
  const was = label(kind, position.version, position.tie);
  return `stale: ${was} ≤ ${label(kind, applied.version, applied.tie)} applied for ${aggregate}`;
}
