import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { baselineServer, receiverServer } from './servers.js';

/**
 * Runs one server in its own process, so the load generator never shares its event loop.
 * argv: `baseline <table>` or `receiver <schema>`; env ONCEFLOW_PG_URL, BENCH_POOL_MAX.
 * Reports `{ port }` over IPC when listening; exits when the parent disconnects.
 */
const [kind, target] = process.argv.slice(2);
const pool = new pg.Pool({
  connectionString: process.env.ONCEFLOW_PG_URL,
  max: Number(process.env.BENCH_POOL_MAX ?? 8),
});
pool.on('error', () => undefined);
if (target === undefined) throw new Error('usage: server-process.ts baseline|receiver <target>');
const server = kind === 'baseline' ? baselineServer(pool, target) : receiverServer(pool, target);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close();
  void pool.end().then(() => process.exit(0));
});
