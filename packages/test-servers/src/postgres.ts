import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Options of `startPostgresServer`. */
export interface PostgresServerOptions {
  /** The port it listens on (loopback only). Pick one no other test uses; never 5432 (the shared server). */
  readonly port: number;
  /**
   * The folder with `initdb`, `pg_ctl` and `postgres`. Default `ONCEFLOW_PG_BIN`, else the newest
   * `/usr/lib/postgresql/<version>/bin` (the Debian/Ubuntu packages).
   */
  readonly binDir?: string | undefined;
  /** Longest wait for a start (crash recovery included), in ms. Default 60 s. */
  readonly readyTimeoutMs?: number | undefined;
}

/**
 * How `stop` ends the server: `fast` (pg_ctl's fast shutdown: sessions ended, a checkpoint),
 * `immediate` (pg_ctl's crash-like stop: every process quits at once, recovery from the WAL on the
 * next start), `kill` (SIGKILL of the postmaster, as the OOM killer does; its sessions notice and
 * quit, and the next start recovers).
 */
export type PostgresStopMode = 'fast' | 'immediate' | 'kill';

/**
 * A PostgreSQL the test owns, never the shared one on 5432: its own cluster (`initdb`, trust
 * authentication, superuser `postgres`) in a temporary directory, its own port and socket
 * directory. `fsync` is off: that loses nothing when only the server's processes die (the
 * operating system keeps what they wrote), which is all a test does to it. Run as root, the
 * cluster belongs to the `postgres` user (`initdb` refuses root) and the commands run through
 * `runuser`. `await using` stops it and removes its directory.
 */
export interface PostgresServer extends AsyncDisposable {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  /** The cluster's data directory (its log is `server.log` beside it). */
  readonly dir: string;
  /** Ends the server (see `PostgresStopMode`; default `fast`); resolves once nothing listens. No-op if not running. */
  stop(mode?: PostgresStopMode): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
}

function defaultBinDir(): string {
  if (process.env.ONCEFLOW_PG_BIN) return process.env.ONCEFLOW_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0])
    throw new Error(`no PostgreSQL binaries under ${root}; set ONCEFLOW_PG_BIN to their folder`);
  return join(root, versions[0], 'bin');
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Creates a cluster and starts it on `options.port`; resolves once it accepts connections. */
export async function startPostgresServer(options: PostgresServerOptions): Promise<PostgresServer> {
  const { port, readyTimeoutMs = 60_000 } = options;
  const bin = options.binDir ?? defaultBinDir();
  const root = mkdtempSync(join(tmpdir(), `onceflow-postgres-${port}-`));
  const data = join(root, 'data');
  const log = join(root, 'server.log');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(root, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = async (tool: string, args: string[]) => {
    const [cmd, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args];
    await run(cmd, argv, { timeout: readyTimeoutMs + 10_000 });
  };
  const postmasterPid = (): number | undefined => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return pid > 0 && alive(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  const serverOptions = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${root}`,
    '-c fsync=off',
    '-c max_connections=200',
  ].join(' ');
  const start = async () => {
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      try {
        const seconds = String(Math.max(1, Math.ceil((deadline - Date.now()) / 1000)));
        await pg('pg_ctl', [
          '-D',
          data,
          '-l',
          log,
          '-o',
          serverOptions,
          '-w',
          '-t',
          seconds,
          'start',
        ]);
        return;
      } catch (err) {
        // After a SIGKILL the old sessions may still hold the shared memory for a moment.
        if (Date.now() > deadline) {
          const tail = existsSync(log)
            ? readFileSync(log, 'utf8').split('\n').slice(-20).join('\n')
            : '';
          throw new Error(
            `PostgreSQL on ${port} did not start: ${(err as Error).message}\n${tail}`,
          );
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  const stop = async (mode: PostgresStopMode = 'fast') => {
    const pid = postmasterPid();
    if (pid === undefined) return;
    if (mode === 'kill') {
      process.kill(pid, 'SIGKILL');
      while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
      return;
    }
    await pg('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  };

  try {
    await pg('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    await start();
  } catch (err) {
    await stop('immediate').catch(() => {});
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir: data,
    stop,
    start,
    async [Symbol.asyncDispose]() {
      await stop('immediate').catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
}
