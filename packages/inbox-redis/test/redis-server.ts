import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/** A redis-server this test owns: started on its own port and data dir, never the shared one. */
export interface OwnRedisServer {
  readonly port: number;
  /** Ends the process with SIGKILL (a crash: nothing flushed beyond what AOF already synced). */
  crash(): Promise<void>;
}

/**
 * Starts `redis-server` in the foreground with AOF, `appendfsync always`, no RDB snapshots, on
 * loopback; resolves once it accepts connections (after replaying its AOF, on a restart).
 * `extra` adds arguments (`--cluster-enabled yes`, …).
 */
export async function startRedisServer(
  port: number,
  dir: string,
  extra: readonly string[] = [],
): Promise<OwnRedisServer> {
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    };
    child.stdout?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  child.stdout?.resume();
  return {
    port,
    async crash() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
