import type { Envelope } from '../envelope.js';

/** Header naming the event id a replayed envelope copies. */
export const REPLAY_OF_HEADER = 'x-onceflow-replay-of';
/** Header naming the replay run that published it. */
export const REPLAY_ID_HEADER = 'x-onceflow-replay-id';

const REPLAY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** True for a replay id the CLI and the console accept: 1–64 of `A-Z a-z 0-9 . _ -`. */
export function isReplayId(text: string): boolean {
  return REPLAY_ID.test(text);
}

/**
 * A replay id from the clock, e.g. `20250301T120000.123Z`. Printed by every replay so a run that
 * stopped half-way can be resumed with `--replay-id` without publishing anything twice.
 */
export function newReplayId(now: Date = new Date()): string {
  return now.toISOString().replace(/[-:]/g, '');
}

/**
 * The envelope a replay publishes: same source, type, key, payload, hash and `receivedAt`, but the
 * id `${id}#replay-${replayId}`, so the worker's processed-guard, which has already seen `id`, runs
 * the handler again, on purpose. The id is a pure function of (original id, replay id): publishing
 * the same replay twice yields the same id and dedupe key, so broker dedupe and the processed-guard
 * make a resumed replay harmless, while a new replay id processes every event once more.
 *
 * Handlers can tell a replay by the `x-onceflow-replay-of` header (the original id); keys they
 * derive from the envelope id (e.g. `ctx.idempotencyKey`) differ from the original run's.
 *
 * @example
 * const copy = replayEnvelope(stored, '20250301T120000.123Z');
 * await transport.publish([{ envelope: copy, dedupeKey: copy.id }]);
 */
export function replayEnvelope(original: Envelope, replayId: string): Envelope {
  if (!isReplayId(replayId)) throw new RangeError(`invalid replay id "${replayId}"`);
  const originalId = original.headers[REPLAY_OF_HEADER] ?? original.id;
  return {
    ...original,
    id: `${originalId}#replay-${replayId}`,
    headers: { ...original.headers, [REPLAY_OF_HEADER]: originalId, [REPLAY_ID_HEADER]: replayId },
  };
}
