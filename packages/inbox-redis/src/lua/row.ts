/**
 * What the scripts share. A row (`r:<member>` hash) has these fields:
 *
 * - `h`   payload hash of the receiver's claim; absent on rows only the worker's guard wrote
 * - `s`   state: `p` pending (claimed, not enqueued), `e` enqueued, `d` done (processed);
 *         absent on a guard-only row not yet processed
 * - `env` the encoded envelope, while pending (the relay publishes it)
 * - `t`   the claim token, while pending; it owns the claim until another takes it over, even
 *         after its lease key `c:<member>` expired
 * - `ca`  claim time (Redis clock, ms), while pending
 * - `ra`  `receivedAt` (ms): what `purge` compares
 * - `wt`  the processing token, likewise owning the `w:<member>` lease until taken over
 * - `pa`  processed time (Redis clock, ms)
 *
 * Times come from the Redis server's clock (`TIME`), never from the callers' clocks. Scripts run
 * atomically; Redis 7 replicates their effects, so reading `TIME` before writing is allowed.
 */
export const NOW_MS = `
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;
