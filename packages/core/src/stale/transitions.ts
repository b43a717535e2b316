import { ReviewError } from '../errors.js';

/** A state machine's allowed moves: each state and the states it may go to. */
export type TransitionMap = Readonly<Record<string, readonly string[]>>;

/** Every state a map names, as a source or a target. */
export type StateOf<M extends TransitionMap> = (keyof M & string) | M[keyof M][number];

export interface Transitions<S extends string> {
  /** Whether `from → to` is allowed: listed in the map, or no move at all (`from === to`). */
  allows(from: S, to: S): boolean;
  /**
   * Returns when `from → to` is allowed, else throws `ReviewError` (`pending → shipped not
   * allowed`), which the worker dead-letters at once with the reason `review: pending → shipped
   * not allowed` instead of overwriting newer state.
   */
  check(from: S, to: S): void;
}

/**
 * Declares which state changes an aggregate may make. A state with no entry, or an empty list, is
 * final. Staying in the same state is always allowed (a repeated `approved` changes nothing).
 *
 * @example
 * const order = defineTransitions({ pending: ['approved', 'rejected'], approved: ['shipped'] });
 * order.check(row.status, 'approved'); // throws ReviewError when row.status is 'shipped'
 */
export function defineTransitions<const M extends TransitionMap>(map: M): Transitions<StateOf<M>> {
  const allowed = new Map<string, ReadonlySet<string>>();
  for (const [from, targets] of Object.entries(map)) allowed.set(from, new Set(targets));
  const allows = (from: string, to: string) => from === to || (allowed.get(from)?.has(to) ?? false);
  return {
    allows,
    check(from, to) {
      if (!allows(from, to)) throw new ReviewError(`${from} → ${to} not allowed`, { from, to });
    },
  };
}
