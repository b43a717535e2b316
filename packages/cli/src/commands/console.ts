import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsole } from '@onceflow/console';
import type { Inbox, RecordStore, Transport } from '@onceflow/core';
import type { Command } from '../args.js';
import { CommandLineError } from '../command-line-error.js';
import { EXIT } from '../exit-codes.js';
import { type Output, printJson } from '../output.js';

type ConsoleCommand = Extract<Command, { name: 'console' }>;

/**
 * Serves the operator console over the record store until `signal` aborts (the binary passes
 * one aborted by SIGINT or SIGTERM), then closes the server; the caller closes the stores.
 * Prints the URL it listens on (with `--json`, one JSON object). Redrive is offered only when a
 * transport was named (`--to`).
 */
export async function serveConsole(
  stores: {
    readonly records: RecordStore;
    readonly inbox?: Pick<Inbox, 'stats'> | undefined;
    readonly transport?: Pick<Transport, 'publish'> | undefined;
  },
  command: ConsoleCommand,
  output: Output,
  signal: AbortSignal,
): Promise<number> {
  if (command.token === undefined || command.token.length < 16)
    throw new CommandLineError(
      'console: set ONCEFLOW_CONSOLE_TOKEN to a token of 16 characters or more (the sign-in token)',
    );
  const ops = createConsole({
    records: stores.records,
    inbox: stores.inbox,
    transport: stores.transport,
    auth: { token: command.token, operator: 'cli' },
    basePath: command.basePath,
    write: command.write,
  });
  const server = createServer(ops.node);
  server.listen(command.port, command.host);
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([err]) => Promise.reject(err)),
  ]);
  const { port } = server.address() as AddressInfo;
  const host = command.host.includes(':') ? `[${command.host}]` : command.host;
  const url = `http://${host}:${port}${command.basePath === '/' ? '/' : `${command.basePath.replace(/\/$/, '')}/`}`;
  const mode = command.write
    ? stores.transport
      ? 'write'
      : 'write (purge only: no --to)'
    : 'read-only';
  if (command.json) printJson(output, { url, mode });
  else output.out(`onceflow console at ${url} (${mode}); Ctrl-C stops it`);
  if (!signal.aborted) await once(signal, 'abort');
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return EXIT.ok;
}
