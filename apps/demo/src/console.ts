import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsole } from '@onceflow/console';
import type { Inbox, RecordStore, Transport } from '@onceflow/core';

/**
 * `pnpm demo --console`: the operator console over the run's record store, until Ctrl-C (or
 * `signal`). Write access with a fresh token printed once; redrive publishes to the run's
 * transport (no worker runs any more, so a redriven letter waits on the queue).
 */
export async function serveDemoConsole(
  stores: {
    readonly records: RecordStore;
    readonly inbox: Pick<Inbox, 'stats'>;
    readonly transport: Transport;
  },
  options: {
    readonly port: number;
    readonly log: (line: string) => void;
    readonly signal?: AbortSignal;
    /** Default: a fresh random one, printed. */
    readonly token?: string;
  },
): Promise<void> {
  const token = options.token ?? randomBytes(18).toString('base64url');
  const ops = createConsole({
    records: stores.records,
    inbox: stores.inbox,
    transport: stores.transport,
    backlog:
      'backlog' in stores.transport ? { [stores.transport.name]: stores.transport as never } : {},
    auth: { token, operator: 'demo' },
    write: true,
  });
  const server = createServer(ops.node);
  server.listen(options.port, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  options.log(`\nconsole: http://127.0.0.1:${port}/  token: ${token}`);
  options.log("  the demo's events, timelines and dead letters; Ctrl-C ends it");
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  options.signal?.addEventListener('abort', onSignal);
  await once(stop.signal, 'abort');
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}
