/** Where one mixed-store run lives, handed to each worker process as JSON (`MIXED_SPEC`). */
export interface MixedSpec {
  /**
   * The receiver's inbox and the broker: `redis` (the Redis inbox, BullMQ on the same server) or
   * `embedded` (the SQLite inbox and queue of one file, `file`).
   */
  readonly shape: 'redis' | 'embedded';
  readonly pgUrl: string;
  /** PostgreSQL schema of the event record and the ledger (no unique key on the event id). */
  readonly schema: string;
  readonly redisUrl: string;
  /** Key prefix of the Redis inbox. */
  readonly inboxPrefix: string;
  /** The embedded shape's SQLite file. */
  readonly file: string;
  /** The queue (BullMQ queue and key prefix, or the embedded queue). */
  readonly queue: string;
  readonly lockMs: number;
  /** Event numbers whose handler throws `NonRetryableError` (dead-lettered in the record). */
  readonly rejected: readonly number[];
}
