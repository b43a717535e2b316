import type { ServerOptions } from 'node:http';
import type { ResolvedReceiverConfig } from './config.js';

/** The node:http server settings that enforce a receiver's read deadlines. */
export type NodeServerOptions = Readonly<
  Required<Pick<ServerOptions, 'headersTimeout' | 'requestTimeout' | 'connectionsCheckingInterval'>>
>;

/**
 * node:http keeps a slow client's connection for up to a minute before its headers are in, and
 * checks its own deadlines only every 30 s. These options make the server answer 408 and close the
 * socket `headersTimeoutMs` after a request started without complete headers (checked at least
 * once a second); `requestTimeout` is only a backstop behind the receiver's own `bodyTimeoutMs`,
 * which answers first.
 */
export function nodeServerOptions(cfg: ResolvedReceiverConfig): NodeServerOptions {
  const { headersTimeoutMs, bodyTimeoutMs } = cfg;
  return Object.freeze({
    headersTimeout: headersTimeoutMs,
    requestTimeout: headersTimeoutMs + bodyTimeoutMs + 1_000,
    connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(headersTimeoutMs / 4))),
  });
}
