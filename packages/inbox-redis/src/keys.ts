import type { StateLetter } from './lua/row.js';

/**
 * Key layout. Every key of one store starts with `{<prefix>}:`, one Redis Cluster hash tag, so a
 * store's keys share one hash slot and each script touches keys of one slot only (see README,
 * "Cluster"). Under that base:
 *
 * - `r:<member>`  hash, one record per (source, id): the claim and the event record (lua/row.ts)
 * - `e:<member>`  the encoded envelope, while the claim is pending and from a dead letter on
 * - `c:<member>`  the receiver's claim lease: the token, expiring with `SET … NX PX`
 * - `w:<member>`  the worker's processing lease: the token, expiring with `SET … NX PX`
 * - `pending`     sorted set of received records (pending claims) by claim time: the relay's
 *                 `takeStale` scan, and the received state's index
 * - `s:<letter>`  sorted set per other state (`e`, `w`, `r`, `d`, `x`, `z`) by updatedAt: `list`
 *                 and `count`; each record is in the index of its state only
 * - `open`        sorted set of claimed records not finished or dead-lettered, by `receivedAt`
 *                 (stats, purge)
 * - `done`        sorted set of completed and discarded records by `receivedAt` (stats, purge)
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
  /** (source, id) of an index member. */
  parseMember(member: string): { readonly source: string; readonly id: string };
  row(member: string): string;
  envelope(member: string): string;
  claimLease(member: string): string;
  workLease(member: string): string;
  /** The index of records in state `letter`, scored by updatedAt. */
  stateIndex(letter: StateLetter): string;
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
    parseMember(member) {
      const colon = member.indexOf(':');
      const length = Number(member.slice(0, colon));
      const start = colon + 1;
      return {
        source: member.slice(start, start + length),
        id: member.slice(start + length + 1),
      };
    },
    row: (member) => `${base}r:${member}`,
    envelope: (member) => `${base}e:${member}`,
    claimLease: (member) => `${base}c:${member}`,
    workLease: (member) => `${base}w:${member}`,
    stateIndex: (letter) => (letter === 'p' ? `${base}pending` : `${base}s:${letter}`),
  };
}
