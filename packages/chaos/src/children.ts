import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A receiver or worker process the harness started. */
export interface Child {
  readonly process: ChildProcess;
  /** Resolves with the signal (or exit code) the process ended with. */
  readonly exited: Promise<string>;
}

/** Forks `entry` (a file beside this one) with `env`; resolves once it reports `ready`. */
export function forkChild(entry: string, env: Record<string, string>): Promise<Child> {
  const file = fileURLToPath(new URL(entry, import.meta.url));
  const child = fork(file, [], {
    execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  return new Promise((resolve, reject) => {
    child.on('message', (m: { kind?: string }) => {
      if (m.kind === 'ready') resolve({ process: child, exited });
    });
    void exited.then((how) => reject(new Error(`${entry} ended (${how}) before it was ready`)));
  });
}

/** Asks a child to stop (drain and close), and SIGKILLs it after `graceMs`. */
export async function stopChild(child: Child, graceMs = 15_000): Promise<void> {
  const p = child.process;
  if (p.exitCode !== null || p.signalCode !== null) return;
  p.kill('SIGCONT');
  if (p.connected) p.send({ kind: 'stop' });
  else p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}
