import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { baselineServer, receiverServer } from './servers.js';

/**
 * Runs one server in its own process, so the load generator never shares its event loop.
 * argv: `baseline <table>`, `baseline-update <table>`, `receiver <schema>` or `receiver-unbatched <schema>`; env
 * ONCEFLOW_PG_URL, BENCH_POOL_MAX, BENCH_APP_NAME (the pool's `application_name`, so the parent
 * can find its PostgreSQL backends), BENCH_MAX_IN_FLIGHT (the inbox's batching `maxInFlight`, if
 * set). Reports `{ port }` over IPC when listening, answers
 * `'counters'` with `{ statements, requests }`, and exits when the parent disconnects.
 */
const [kind, target] = process.argv.slice(2);
const pool = new pg.Pool({
  connectionString: process.env.ONCEFLOW_PG_URL,
  max: Number(process.env.BENCH_POOL_MAX ?? 8),
  application_name: process.env.BENCH_APP_NAME,
  idleTimeoutMillis: 0, // keep the backends for the whole run: their CPU is measured
});
pool.on('error', () => undefined);
if (target === undefined) {
  throw new Error(
    'usage: server-process.ts baseline|baseline-update|receiver|receiver-unbatched <target>',
  );
}
const server =
  kind === 'baseline' || kind === 'baseline-update'
    ? baselineServer(pool, target, { markEnqueued: kind === 'baseline-update' })
    : receiverServer(pool, target, {
        batching:
          kind === 'receiver-unbatched'
            ? false
            : { maxInFlight: Number(process.env.BENCH_MAX_IN_FLIGHT) || undefined },
      });
let statements = 0;
let requests = 0;
pool.on('acquire', () => {
  statements += 1; // every pool.query checks a client out once
});
server.on('request', () => {
  requests += 1;
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('message', (m) => {
  if (m === 'counters') process.send?.({ statements, requests });
});
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close();
  void pool.end().then(() => process.exit(0));
});
