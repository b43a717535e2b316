/**
 * An optional ability of a store or a transport: a cheap round trip to what it depends on (a
 * `SELECT 1`, a Redis `PING`, a broker channel), for readiness probes. Detected with
 * `hasHealthCheck`; a store or transport without it counts as reachable.
 *
 * `check` resolves once the dependency answered and rejects (any error) when it did not. It
 * must not change state (no topology declared, no message sent) and should give up when
 * `signal` aborts; callers bound it in time themselves and stop waiting at the limit.
 */
export interface HealthCheck {
  check(signal: AbortSignal): Promise<void>;
}

/**
 * Whether `value` has the optional `check` ability.
 *
 * @example
 * if (hasHealthCheck(transport)) await transport.check(AbortSignal.timeout(2000));
 */
export function hasHealthCheck(value: unknown): value is HealthCheck {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<HealthCheck>).check === 'function'
  );
}
