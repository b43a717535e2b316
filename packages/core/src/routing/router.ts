import { ConfigError } from '../errors.js';
import {
  matches as matchesPattern,
  overlap,
  parsePattern,
  precedence,
  type RoutePattern,
} from './pattern.js';

/** Something routed by a `[source:]type` pattern (a handler: its `type`). */
export interface Routable {
  readonly type: string;
}

/** A compiled route table: built once, then only read (safe to share between deliveries). */
export interface Router<T extends Routable> {
  /** The one entry for this event, by the precedence rule, or undefined. */
  route(source: string, type: string): T | undefined;
  /** The patterns, highest precedence first (for start-up logs). */
  readonly patterns: readonly string[];
}

/** Wildcard answers are remembered per (source, type) up to this many, then forgotten at once. */
const MEMO_LIMIT = 4096;

/**
 * Compiles `[source:]type` patterns (see `parsePattern`) into a router. Precedence, highest
 * first: an exact type beats any wildcard; among wildcards, more literal type segments win; then
 * a named source beats `*`. Two patterns of equal precedence that one event could match both
 * (`invoice.*` and `*.paid`, or `paid` and `*:paid`) are a `ConfigError` here, never a silent
 * choice at run time.
 *
 * Exact types are one map lookup; wildcard answers are memoised per (source, type).
 *
 * @example
 * const router = compileRoutes([{ type: 'stripe:invoice.*' }, { type: '*:invoice.paid' }]);
 * router.route('stripe', 'invoice.paid')?.type; // '*:invoice.paid': the exact type wins
 */
export function compileRoutes<T extends Routable>(entries: readonly T[]): Router<T> {
  const parsed = entries.map((entry) => ({ entry, pattern: parsePattern(entry.type) }));
  assertNoTies(parsed.map((p) => p.pattern));
  // Exact types: by type for `*`, by source then type for a named source. No key is built per
  // lookup, so a table of plain types costs one map lookup per delivery, as before patterns.
  const anySource = new Map<string, T>();
  const bySource = new Map<string, Map<string, T>>();
  const wild: { entry: T; pattern: RoutePattern }[] = [];
  for (const p of parsed) {
    const { source, segments, exact } = p.pattern;
    if (!exact) wild.push(p);
    else if (source === undefined) anySource.set(segments.join('.'), p.entry);
    else {
      const types = bySource.get(source) ?? new Map<string, T>();
      types.set(segments.join('.'), p.entry);
      bySource.set(source, types);
    }
  }
  wild.sort((a, b) => precedence(a.pattern, b.pattern));
  const memo = new Map<string, T | undefined>();

  const routeWild = (source: string, type: string): T | undefined => {
    const key = `${source}\u0000${type}`;
    if (memo.has(key)) return memo.get(key);
    const found = wild.find((w) => matchesPattern(w.pattern, source, type))?.entry;
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(key, found);
    return found;
  };

  return {
    route(source, type) {
      const hit =
        (bySource.size === 0 ? undefined : bySource.get(source)?.get(type)) ?? anySource.get(type);
      if (hit !== undefined || wild.length === 0) return hit;
      return routeWild(source, type);
    },
    patterns: parsed
      .map((p) => p.pattern)
      .sort(precedence)
      .map((p) => p.text),
  };
}

function assertNoTies(patterns: readonly RoutePattern[]): void {
  for (let i = 0; i < patterns.length; i++) {
    for (let j = i + 1; j < patterns.length; j++) {
      const a = patterns[i]!;
      const b = patterns[j]!;
      if (precedence(a, b) === 0 && overlap(a, b)) {
        throw new ConfigError(
          `handler types "${a.text}" and "${b.text}" are equally specific and both match some events: make one more specific`,
        );
      }
    }
  }
}
