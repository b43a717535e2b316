/**
 * `new Date(ms).toISOString()` for times that mostly fall in the same second as the previous
 * call (a request's receipt time, a sender's `created`): the date and time up to the second are
 * formatted once per second and reused, only the milliseconds are written per call. Same output
 * as `toISOString`, including its `RangeError` for a time outside the Date range.
 *
 * @example
 * const iso = isoFormatter();
 * iso(Date.UTC(2026, 0, 2, 3, 4, 5, 6)); // '2026-01-02T03:04:05.006Z'
 */
/** The largest distance from the epoch a Date holds, in ms. */
const MAX_TIME = 8.64e15;

export function isoFormatter(): (ms: number) => string {
  let second = Number.NaN;
  let prefix = '';
  return (ms) => {
    if (!(Math.abs(ms) <= MAX_TIME)) throw new RangeError('Invalid time value');
    const t = Math.trunc(ms); // as `new Date(ms)` does
    const s = Math.floor(t / 1000);
    if (s !== second) {
      prefix = new Date(s * 1000).toISOString().slice(0, -4); // '…T03:04:05.'
      second = s;
    }
    const milli = t - s * 1000;
    return `${prefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  };
}
