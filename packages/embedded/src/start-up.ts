import type { Logger } from '@onceflow/core';
import { createBackoff } from '@onceflow/core/kit';
import { type DatabaseHandle, isBusy } from './database.js';
import { asStore } from './errors.js';

/** Waits between start-up attempts while the file is locked: 100 ms doubling up to 2 s, full jitter. */
const BACKOFF = { baseDelayMs: 100, maxDelayMs: 2_000 };

/**
 * Opens the file (WAL, pragmas, migrations), trying again with backoff while another process holds
 * the write lock it needs, for up to `timeoutMs`; logs one warning while it waits. Rejects with
 * `StoreUnavailableError` on any other failure, or once `timeoutMs` has passed.
 */
export async function openWhenUnlocked(
  handle: DatabaseHandle,
  options: { readonly timeoutMs: number; readonly logger: Logger },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const backoff = createBackoff(BACKOFF);
  let warned = false;
  for (;;) {
    try {
      await asStore('start', () => void handle.open());
      if (warned) options.logger.info('embedded: the database is free again; started');
      return;
    } catch (err) {
      if (!isBusy((err as Error).cause) || Date.now() >= deadline) throw err;
      if (!warned) {
        warned = true;
        options.logger.warn(
          { err },
          'embedded: another process holds the database’s write lock; retrying start-up',
        );
      }
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(backoff.next(), Math.max(0, deadline - Date.now()))),
    );
  }
}
