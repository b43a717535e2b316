// Background broker processes for tests and laptops: start detached with a pid file and a log,
// wait until the port answers, stop by pid file.
import { spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { reachable } from '../services.mjs';

const pidFile = (stateDir, name) => join(stateDir, `${name}.pid`);
export const logFile = (stateDir, name) => join(stateDir, `${name}.log`);

/** True when a process with this pid exists. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid recorded for `name`, when that process is still alive. */
export function runningPid(stateDir, name) {
  try {
    const pid = Number(readFileSync(pidFile(stateDir, name), 'utf8'));
    return pid > 0 && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Starts `command` detached from this process, its output appended to `<stateDir>/<name>.log`. */
export function startDetached({ stateDir, name, command, args, cwd, env }) {
  mkdirSync(stateDir, { recursive: true });
  const out = openSync(logFile(stateDir, name), 'a');
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', out, out],
  });
  writeFileSync(pidFile(stateDir, name), String(child.pid));
  child.unref();
  return child.pid;
}

/**
 * Runs `start` holding `<stateDir>/<name>.start-lock`, so two starts of one broker at once (two
 * clones' `pnpm test`, a script beside a test run) never format and run one data directory
 * twice: the second waits for the first, then finds the broker answering. A lock whose owner
 * died is taken over.
 */
export async function withStartLock(stateDir, name, start, timeoutMs = 300_000) {
  mkdirSync(stateDir, { recursive: true });
  const lock = join(stateDir, `${name}.start-lock`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if (err?.code !== 'EEXIST') throw err;
      const owner = lockOwner(lock);
      if (owner === undefined) continue; // released meanwhile
      if (owner > 0 && !alive(owner)) rmSync(lock, { force: true });
      else if (Date.now() > deadline)
        throw new Error(`${name}: another start (pid ${owner}) still holds ${lock}`);
      else await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await start();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** The pid in a start lock (0 while its owner is writing it), or undefined once it is gone. */
function lockOwner(lock) {
  try {
    return Number(readFileSync(lock, 'utf8')) || 0;
  } catch {
    return undefined;
  }
}

/** Waits until host:port accepts connections; fails early, with the log's tail, if the process dies. */
export async function waitForPort({ stateDir, name, pid, host = '127.0.0.1', port, timeoutMs }) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await reachable(host, port, 500)) return;
    if (!alive(pid))
      throw new Error(`${name} exited before ${host}:${port} opened\n${tail(stateDir, name)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `${name} did not open ${host}:${port} within ${timeoutMs} ms\n${tail(stateDir, name)}`,
  );
}

/** Stops the process recorded for `name`: SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(stateDir, name, graceMs = 20_000) {
  const pid = runningPid(stateDir, name);
  rmSync(pidFile(stateDir, name), { force: true });
  if (pid === undefined) return false;
  const signal = (s) => {
    try {
      process.kill(-pid, s); // the detached process group: the JVM and anything it started
    } catch {
      try {
        process.kill(pid, s);
      } catch {}
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  if (alive(pid)) signal('SIGKILL');
  return true;
}

function tail(stateDir, name, lines = 40) {
  try {
    return readFileSync(logFile(stateDir, name), 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
