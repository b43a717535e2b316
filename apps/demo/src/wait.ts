/**
 * How long a wait may see no progress before it fails. A loaded machine makes the demo slower, not
 * stuck: the waits below fail only when nothing moved for this long, never on a fixed deadline.
 */
export const STALL_MS = 60_000;

/**
 * Resolves once `check` answers `true`. Until then `check` answers a progress count (events done,
 * ledger rows, …); the wait fails, naming `what`, only when that count has not grown for `stallMs`.
 *
 * @example
 * await untilDone('ledger rows', async () => ((await rows()) >= 100 ? true : await rows()));
 */
export async function untilDone(
  what: string,
  check: () => Promise<true | number>,
  stallMs = STALL_MS,
  pollMs = 100,
): Promise<void> {
  let best = Number.NEGATIVE_INFINITY;
  let movedAt = Date.now();
  for (;;) {
    const answer = await check();
    if (answer === true) return;
    if (answer > best) {
      best = answer;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stallMs) {
      throw new Error(
        `stalled waiting for ${what}: no progress for ${stallMs / 1000} s (at ${best})`,
      );
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
