import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';

/** Options of `startTcpProxy`. */
export interface TcpProxyOptions {
  /** Where connections are forwarded: a server the test does not own (the shared ElasticMQ). */
  readonly targetHost?: string | undefined;
  readonly targetPort: number;
}

/**
 * A loopback TCP proxy in front of a server, for network faults without touching the server:
 * `hang()` keeps every connection open and accepts new ones but forwards nothing (a partition),
 * `refuse()` closes every connection and the port (nothing listens: connection refused), and
 * `restore()` closes the connections left from before and forwards new ones again on the same
 * port. `await using` closes it.
 */
export interface TcpProxy extends AsyncDisposable {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  hang(): void;
  refuse(): Promise<void>;
  restore(): Promise<void>;
}

/** Starts a proxy on a free loopback port. */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const host = options.targetHost ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  let hanging = false;

  const onConnection = (client: Socket) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (hanging) return; // accepted, never answered
    const upstream = connect({ host, port: options.targetPort });
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.on('data', (chunk) => {
      if (!hanging) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!hanging) client.write(chunk);
    });
  };

  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const server = createServer(onConnection);
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve(server));
    });
  const closeAll = async (server: Server) => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  let server: Server | undefined = await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    hang() {
      hanging = true;
    },
    async refuse() {
      hanging = false;
      const s = server;
      server = undefined;
      if (s) await closeAll(s);
    },
    async restore() {
      // What a hung connection carried is lost: its client must connect again.
      for (const s of sockets) s.destroy();
      sockets.clear();
      hanging = false;
      server ??= await listen(port);
    },
    async [Symbol.asyncDispose]() {
      const s = server;
      server = undefined;
      if (s) await closeAll(s);
    },
  };
}
