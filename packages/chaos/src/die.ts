/**
 * Kill points inside a child process. `CHAOS_DIE=<point>:<n>` makes the process SIGKILL itself
 * the n-th time it passes `point`: a crash at exactly that step, with nothing flushed or closed.
 */
export function killPoint(
  env: string | undefined = process.env.CHAOS_DIE,
): (point: string) => void {
  const [at, after] = (env ?? '').split(':');
  const n = Number(after);
  let seen = 0;
  return (point) => {
    if (point === at && ++seen === n) process.kill(process.pid, 'SIGKILL');
  };
}
