/** One named check of a probe: resolves when healthy, rejects (with the reason) when not. */
export type Check = (signal: AbortSignal) => Promise<void>;

/** One check's result, as the probe's JSON body shows it. */
export interface CheckResult {
  readonly status: 'pass' | 'fail';
  /** How long the check took, in ms (at most about the time limit). */
  readonly durationMs: number;
  /** Why it failed. */
  readonly error?: string | undefined;
}

/**
 * A probe's answer: `pass` when every check passed (HTTP 200), else `fail` (HTTP 503). The shape
 * follows the IETF health-check draft's `status` and `checks`.
 */
export interface ProbeReport {
  readonly status: 'pass' | 'fail';
  readonly checks: Readonly<Record<string, CheckResult>>;
}

const messageOf = (err: unknown): string =>
  err instanceof Error ? err.message || err.name : String(err);

/** Runs one check bounded by `timeoutMs`: past it, the check's signal aborts and it fails. */
async function runCheck(check: Check, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`no answer within ${timeoutMs} ms`);
      abort.abort(err);
      reject(err);
    }, timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(() => check(abort.signal)), late]);
    return { status: 'pass', durationMs: elapsed(started) };
  } catch (err) {
    return { status: 'fail', durationMs: elapsed(started), error: messageOf(err) };
  } finally {
    clearTimeout(timer);
  }
}

const elapsed = (started: number) => Math.round((performance.now() - started) * 10) / 10;

/** Runs every check at once, each within `timeoutMs`; never rejects. */
export async function runChecks(
  checks: Readonly<Record<string, Check>>,
  timeoutMs: number,
): Promise<ProbeReport> {
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((name) => runCheck(checks[name]!, timeoutMs)));
  const byName: Record<string, CheckResult> = {};
  for (const [i, name] of names.entries()) byName[name] = results[i]!;
  return { status: results.every((r) => r.status === 'pass') ? 'pass' : 'fail', checks: byName };
}
