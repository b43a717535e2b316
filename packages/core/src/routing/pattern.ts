import { ConfigError } from '../errors.js';

/**
 * A handler's route, parsed: `[source:]type`.
 *
 * - `source` is a configured source name or `*` (any); left out (no `:`), it is `*`, so a plain
 *   `invoice.paid` takes that type from every source, as handler types always did.
 * - `type` is dot-separated segments. A `*` segment matches exactly one segment, except as the
 *   last segment, where it matches one or more (`invoice.*` takes `invoice.paid` and
 *   `invoice.payment.failed`; `*` alone takes every type). Other segments match literally.
 */
export interface RoutePattern {
  /** The pattern as written. */
  readonly text: string;
  /** A source name, or undefined for `*`. */
  readonly source: string | undefined;
  /** Type segments; `undefined` for a `*` segment. */
  readonly segments: readonly (string | undefined)[];
  /** True when no type segment is a wildcard. */
  readonly exact: boolean;
  /** How many type segments are literal. */
  readonly literals: number;
}

/** Parses `[source:]type`; a malformed pattern is a `ConfigError`. */
export function parsePattern(text: string): RoutePattern {
  const colon = text.indexOf(':');
  const sourcePart = colon === -1 ? '*' : text.slice(0, colon);
  const typePart = colon === -1 ? text : text.slice(colon + 1);
  if (sourcePart === '' || typePart === '' || sourcePart.includes('*') !== (sourcePart === '*')) {
    throw new ConfigError(
      `handler type "${text}": write [source:]type, source a name or *, e.g. stripe:invoice.*`,
    );
  }
  const segments = typePart.split('.').map((s) => {
    if (s === '') throw new ConfigError(`handler type "${text}": empty type segment`);
    if (s === '*') return undefined;
    if (s.includes('*')) {
      throw new ConfigError(`handler type "${text}": * stands for a whole segment (invoice.*)`);
    }
    return s;
  });
  const literals = segments.filter((s) => s !== undefined).length;
  return {
    text,
    source: sourcePart === '*' ? undefined : sourcePart,
    segments,
    exact: literals === segments.length,
    literals,
  };
}

/** True when the pattern takes an event of this source and type. */
export function matches(p: RoutePattern, source: string, type: string): boolean {
  if (p.source !== undefined && p.source !== source) return false;
  const parts = type.split('.');
  const n = p.segments.length;
  const rest = !p.exact && p.segments[n - 1] === undefined;
  if (rest ? parts.length < n : parts.length !== n) return false;
  for (let i = 0; i < n; i++) {
    const s = p.segments[i];
    if (s !== undefined && s !== parts[i]) return false;
  }
  return true;
}

/**
 * Precedence, highest first: an exact type beats any wildcard type; among wildcard types, more
 * literal segments win; then a named source beats `*`. Negative when `a` wins.
 */
export function precedence(a: RoutePattern, b: RoutePattern): number {
  if (a.exact !== b.exact) return a.exact ? -1 : 1;
  if (a.literals !== b.literals) return b.literals - a.literals;
  return Number(b.source !== undefined) - Number(a.source !== undefined);
}

/** True when some event (source, type) matches both patterns. */
export function overlap(a: RoutePattern, b: RoutePattern): boolean {
  if (a.source !== undefined && b.source !== undefined && a.source !== b.source) return false;
  const restA = a.segments[a.segments.length - 1] === undefined;
  const restB = b.segments[b.segments.length - 1] === undefined;
  const la = a.segments.length;
  const lb = b.segments.length;
  // Length sets: {n}, or [n, ∞) with a trailing `*`.
  if (!restA && !restB && la !== lb) return false;
  if (!restA && restB && la < lb) return false;
  if (restA && !restB && lb < la) return false;
  for (let i = 0; i < Math.min(la, lb); i++) {
    const x = a.segments[i];
    const y = b.segments[i];
    if (x !== undefined && y !== undefined && x !== y) return false;
  }
  return true;
}
