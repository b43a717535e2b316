import { HISTORY_LIMIT } from '@onceflow/core';

/**
 * What the scripts share. A row (`r:<member>` hash) is one event's claim and record:
 *
 * - `h`   payload hash of the receiver's claim; absent on records of events that never passed a
 *         receiver
 * - `s`   state, one letter (`STATE_LETTERS`): `p` received, `e` enqueued, `w` processing,
 *         `r` retry-scheduled, `d` completed, `x` dead-lettered, `z` discarded
 * - `t`   the claim token, while pending; it owns the claim until another takes it over, even
 *         after its lease key `c:<member>` expired
 * - `wt`  the processing token, likewise owning the `w:<member>` lease until taken over
 * - `ra`  `receivedAt` (ms): what `purge` compares; `u` updatedAt (ms), the last state change
 * - `ty`, `k`, `ti`: the envelope's type, key and trace id
 * - `n` attempts, `na` nextAttemptAt (ms), `rs` reason, `cn` consumer
 * - `ec`, `en`, `em`: lastError's code, name and message
 * - `yn`  history entries written so far; entry i is in `y<i mod HISTORY_LIMIT>`, as the JSON
 *         array `[at ms, state letter, attempt, code, actor, note]` without trailing blanks
 *
 * The encoded envelope (wire format v1) is not a field but its own string key `e:<member>`,
 * present while the claim is pending (the relay publishes it) and from a dead letter on (a redrive
 * republishes it). History lives in one field per entry, not one JSON
 * array, and lastError in three. So a typical record keeps every value within
 * `hash-max-listpack-value` (64 bytes) and Redis stores the hash compactly (see README): one value
 * past it converts the hash for good.
 *
 * Times come from the Redis server's clock (`TIME`), never from the callers' clocks. Scripts run
 * atomically; Redis 7 replicates their effects, so reading `TIME` before writing is allowed.
 */
export const STATE_LETTERS = {
  received: 'p',
  enqueued: 'e',
  processing: 'w',
  'retry-scheduled': 'r',
  completed: 'd',
  'dead-lettered': 'x',
  discarded: 'z',
} as const;

export type StateLetter = (typeof STATE_LETTERS)[keyof typeof STATE_LETTERS];

/** States whose rows carry no TTL: pending claims (the relay needs them) and dead letters. */
export const KEPT_STATES: readonly StateLetter[] = ['p', 'x'];

/** The fields `list` reads of each row, in reply order. */
export const RECORD_FIELDS = [
  's',
  'ty',
  'k',
  'n',
  'na',
  'ec',
  'en',
  'em',
  'rs',
  'cn',
  'ti',
  'ra',
  'u',
  'yn',
  ...Array.from({ length: HISTORY_LIMIT }, (_, i) => `y${i}`),
] as const;

/**
 * `nowMs()`, `put(fields, name, value)` (skips blanks), `historyEntry(...)`, `envKey(base,
 * member)`, and `enter(...)`: the one way a script changes a row's state. It writes the state,
 * `u`, the next history slot and the caller's `fields` in one `HSET`, moves the member from the
 * old state's index to the new one's (`pending` for received, `s:<letter>` otherwise, scored by
 * `u`), and sets the TTL the state calls for: none while received or dead-lettered, `retention`
 * otherwise. So a row in a TTL state expires exactly `retention` after its `u`, which is what
 * `count` and the index pruning rely on. The envelope key is written without a TTL (claim, dead
 * letter) and given one only where its record leaves those states with it kept (`begin` of a
 * pending claim or a redrive, `act`): every other transition of such a record deletes it or
 * leaves it to expire first.
 */
export const PRELUDE = `
local HISTORY_LIMIT = ${HISTORY_LIMIT}
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function envKey(base, member) return base .. 'e:' .. member end
local function indexKey(base, state)
  if state == 'p' then return base .. 'pending' end
  return base .. 's:' .. state
end
local function put(fields, name, value)
  if value and value ~= '' then
    fields[#fields + 1] = name
    fields[#fields + 1] = value
  end
end
local function historyEntry(at, state, attempt, code, actor, note)
  local e = {at, state, tonumber(attempt) or 0, code or '', actor or '', note or ''}
  local n = 6
  while n > 2 and (e[n] == '' or e[n] == 0) do
    e[n] = nil
    n = n - 1
  end
  return cjson.encode(e)
end
local function enter(base, rowKey, member, from, written, to, now, retention, entry, fields)
  local slot = tonumber(written) or 0
  put(fields, 's', to)
  put(fields, 'u', now)
  put(fields, 'yn', slot + 1)
  put(fields, 'y' .. (slot % HISTORY_LIMIT), entry)
  redis.call('HSET', rowKey, unpack(fields))
  if from and from ~= to then redis.call('ZREM', indexKey(base, from), member) end
  redis.call('ZADD', indexKey(base, to), now, member)
  if to ~= 'p' and to ~= 'x' then
    redis.call('PEXPIRE', rowKey, retention)
  elseif from then
    redis.call('PERSIST', rowKey)
  end
end
`;
