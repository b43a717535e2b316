import { type Logger, TransportUnavailableError } from '@onceflow/core';
import { brokerCall, createBackoff } from '@onceflow/core/kit';
import amqp, { type ChannelModel } from 'amqplib';

/**
 * One AMQP connection that comes back by itself. After an unexpected close (broker restart,
 * network loss) it reconnects with exponential backoff and full jitter (a delay ceiling of
 * `minMs` doubling up to `maxMs`) until it succeeds or `close()` is called, and tells `onConnect`
 * listeners each time it is back so they can reopen channels. While it is down, `connection()` rejects with `TransportUnavailableError`
 * at once, except while a connect attempt is under way, which it waits for.
 */
export interface Link {
  connection(): Promise<ChannelModel>;
  /** The server's version (`3.10.8`), once connected. */
  readonly serverVersion: string | undefined;
  /** Called after every successful connect, the first included. Returns an unsubscribe function. */
  onConnect(listener: (connection: ChannelModel) => void): () => void;
  close(): Promise<void>;
}

export interface LinkOptions {
  readonly url: string;
  readonly name: string;
  readonly minMs: number;
  readonly maxMs: number;
  readonly logger: Logger;
}

export function createLink(options: LinkOptions): Link {
  const { logger } = options;
  let live: ChannelModel | undefined;
  let attempt: Promise<ChannelModel> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const backoff = createBackoff({ baseDelayMs: options.minMs, maxDelayMs: options.maxMs });
  let serverVersion: string | undefined;
  let closed = false;
  const listeners = new Set<(connection: ChannelModel) => void>();

  const scheduleReconnect = () => {
    if (closed || timer || attempt) return;
    timer = setTimeout(() => {
      timer = undefined;
      connect().catch(() => scheduleReconnect());
    }, backoff.next());
  };

  const connect = (): Promise<ChannelModel> => {
    attempt ??= brokerCall(`rabbitmq ${options.name}: connect`, async () => {
      const conn = await amqp.connect(options.url, {
        clientProperties: { connection_name: options.name },
        timeout: 5_000,
      });
      if (closed) {
        await conn.close().catch(() => {});
        throw new TransportUnavailableError(`rabbitmq ${options.name}: closed`);
      }
      const version = conn.connection.serverProperties?.version;
      serverVersion = typeof version === 'string' ? version : undefined;
      conn.on('error', (err: unknown) => logger.warn({ err }, 'rabbitmq connection error'));
      conn.on('close', () => {
        if (live === conn) live = undefined;
        if (closed) return;
        logger.warn({ connection: options.name }, 'rabbitmq connection lost; reconnecting');
        scheduleReconnect();
      });
      live = conn;
      backoff.reset();
      for (const listener of listeners) listener(conn);
      return conn;
    }).finally(() => {
      attempt = undefined;
    });
    return attempt;
  };

  return {
    get serverVersion() {
      return serverVersion;
    },
    async connection() {
      if (closed) throw new TransportUnavailableError(`rabbitmq ${options.name}: closed`);
      if (live) return live;
      if (attempt) return attempt;
      if (timer)
        throw new TransportUnavailableError(
          `rabbitmq ${options.name}: broker unreachable; reconnecting`,
        );
      return connect().catch((err: unknown) => {
        scheduleReconnect();
        throw err;
      });
    },
    onConnect(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await attempt?.catch(() => {});
      const conn = live;
      live = undefined;
      await conn?.close().catch(() => {});
    },
  };
}
