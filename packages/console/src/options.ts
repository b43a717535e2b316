import type { BacklogProbe, Inbox, RecordStore, Transport } from '@onceflow/core';
import { UsageError } from '@onceflow/core';

/**
 * Who may open the console. Either a shared token (sent as `Authorization: Bearer <token>`, or
 * typed once into the console's sign-in form, which sets an HttpOnly, SameSite=Strict cookie), or
 * a hook of the host app that reads its own session from the request and returns the operator's
 * name, or `undefined` to refuse.
 */
export type ConsoleAuth =
  | { readonly token: string; readonly operator?: string | undefined }
  | {
      readonly authorize: (request: Request) => string | undefined | Promise<string | undefined>;
    };

export interface ConsoleOptions {
  /** The event record the console reads and acts on (embedded, PostgreSQL, Redis or memory). */
  readonly records: RecordStore;
  /** Where a redriven dead letter is published: the transport the workers consume. */
  readonly transport?: Pick<Transport, 'publish'> | undefined;
  /**
   * Transports whose backlog the overview shows (ready, delayed, in flight, Kafka lag per
   * partition), by name: any with the `BacklogProbe` ability (every bundled transport has it).
   */
  readonly backlog?: Readonly<Record<string, BacklogProbe>> | undefined;
  /**
   * The receiver's inbox (usually the same store object as `records`), for the overview's payload
   * conflicts (a sender reused an event id with other bytes) and pending claims.
   */
  readonly inbox?: Pick<Inbox, 'stats'> | undefined;
  readonly auth: ConsoleAuth;
  /**
   * Allow actions (redrive, purge). Default `false`: read-only, every action refused with 403.
   * Redrive also needs `transport`.
   */
  readonly write?: boolean | undefined;
  /** Path the console is mounted under, e.g. `/console`. Default `/`. */
  readonly basePath?: string | undefined;
  /** Key for CSRF tokens and the sign-in cookie. Default: random per process (sign in again after a restart). */
  readonly secret?: string | undefined;
  /** Rows per page, 1 to 500. Default 50. */
  readonly pageSize?: number | undefined;
  /** Seconds between the overview's refreshes. Default 10. */
  readonly refreshSeconds?: number | undefined;
}

export interface ResolvedConsoleOptions extends ConsoleOptions {
  readonly basePath: string;
  readonly write: boolean;
  readonly pageSize: number;
  readonly refreshSeconds: number;
}

/** Validates once, at creation: a clear `UsageError` for a bad field, no I/O. */
export function resolveConsoleOptions(options: ConsoleOptions): ResolvedConsoleOptions {
  if (!options || typeof options.records?.list !== 'function')
    throw new UsageError('console: records must be a RecordStore');
  const auth = options.auth as Partial<Record<'token' | 'authorize', unknown>> | undefined;
  if (!auth || (typeof auth.token !== 'string' && typeof auth.authorize !== 'function'))
    throw new UsageError('console: auth must be { token } or { authorize(request) }');
  if (typeof auth.token === 'string' && auth.token.length < 16)
    throw new UsageError('console: auth.token must be at least 16 characters');
  const basePath = `/${(options.basePath ?? '/').replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '');
  const pageSize = options.pageSize ?? 50;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 500)
    throw new UsageError('console: pageSize must be an integer from 1 to 500');
  const refreshSeconds = options.refreshSeconds ?? 10;
  if (!Number.isFinite(refreshSeconds) || refreshSeconds < 1)
    throw new UsageError('console: refreshSeconds must be at least 1');
  return { ...options, basePath, write: options.write === true, pageSize, refreshSeconds };
}
