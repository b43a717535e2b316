/**
 * Key layout. Every key of one store starts with `{<prefix>}:`, one Redis Cluster hash tag, so a
 * store's keys share one hash slot and each script touches keys of one slot only (see README,
 * "Cluster"). Under that base:
 *
 * - `r:<member>`  hash, one row per (source, id): payload hash, state, envelope while pending, tokens
 * - `c:<member>`  the receiver's claim lease: the token, expiring with `SET … NX PX`
 * - `w:<member>`  the worker's processing lease: the token, expiring with `SET … NX PX`
 * - `pending`     sorted set of pending claims by claim time (the relay's `takeStale` scan)
 * - `open`        sorted set of claimed, unprocessed rows by `receivedAt` (stats, purge)
 * - `done`        sorted set of processed rows by `receivedAt` (stats, purge)
 * - `conflicts`   stream of payload conflicts (evidence for the operator; ids are times)
 */
export interface InboxKeys {
  /** `{prefix}:`, the base every key starts with; scripts build row and lease keys from it. */
  readonly base: string;
  readonly pending: string;
  readonly open: string;
  readonly done: string;
  readonly conflicts: string;
  /** The index member of (source, id): length-prefixed, so no source or id can alias another. */
  member(source: string, id: string): string;
  row(member: string): string;
  claimLease(member: string): string;
  workLease(member: string): string;
}

export function inboxKeys(prefix: string): InboxKeys {
  const base = `{${prefix}}:`;
  return {
    base,
    pending: `${base}pending`,
    open: `${base}open`,
    done: `${base}done`,
    conflicts: `${base}conflicts`,
    member: (source, id) => `${source.length}:${source}:${id}`,
    row: (member) => `${base}r:${member}`,
    claimLease: (member) => `${base}c:${member}`,
    workLease: (member) => `${base}w:${member}`,
  };
}
