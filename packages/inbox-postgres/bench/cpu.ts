import type pg from 'pg';

export { processCpuMs } from '../../core/bench/process-cpu.js';

/** The server pids of every PostgreSQL connection opened with this `application_name`. */
export async function backendPids(admin: pg.Pool, applicationName: string): Promise<number[]> {
  const res = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
    [applicationName],
  );
  return res.rows.map((r) => r.pid);
}

/** WAL written so far by the whole cluster, bytes (PostgreSQL 14+; 0 before). */
export async function walBytes(admin: pg.Pool): Promise<number> {
  const res = await admin
    .query<{ bytes: number }>('SELECT wal_bytes::float8 AS bytes FROM pg_stat_wal')
    .catch(() => undefined);
  return res?.rows[0]?.bytes ?? 0;
}

/** What one server cost during a measured stretch, per request. */
export interface CostPerRequest {
  /** CPU of the server process, µs. */
  readonly serverUs: number;
  /** CPU of its PostgreSQL backends (this host only), µs. */
  readonly postgresUs: number;
  /** Statements sent to PostgreSQL. */
  readonly statements: number;
  /** WAL the cluster wrote, bytes (anything else writing at the time counts too). */
  readonly walBytes: number;
}

export interface CostCounters {
  readonly serverMs: number;
  readonly postgresMs: number;
  readonly statements: number;
  readonly requests: number;
  readonly walBytes: number;
}

export function costPerRequest(before: CostCounters, after: CostCounters): CostPerRequest {
  const n = Math.max(1, after.requests - before.requests);
  return {
    serverUs: ((after.serverMs - before.serverMs) * 1000) / n,
    postgresUs: ((after.postgresMs - before.postgresMs) * 1000) / n,
    statements: (after.statements - before.statements) / n,
    walBytes: (after.walBytes - before.walBytes) / n,
  };
}

export const formatCost = (c: CostPerRequest): string =>
  `per req: cpu server ${Math.round(c.serverUs)} µs + postgres ${Math.round(c.postgresUs)} µs, ${c.statements.toFixed(2)} statements, ~${Math.round(c.walBytes)} B WAL`;
