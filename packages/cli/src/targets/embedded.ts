import { existsSync } from 'node:fs';
import { createEmbedded, type Embedded } from '@onceflow/embedded';
import type { StoreTarget, TargetOptions, TransportTarget } from '../target.js';
import { createSqliteInboxBrowser } from './sqlite-browser.js';

/**
 * Opens the embedded SQLite file at `--db`, refusing a path where no file exists rather than
 * creating an empty store, so a typo in `--db` fails loudly instead of reporting "No dead letters".
 * Opening applies the file's pending schema migrations, as every embedded process does.
 */
async function openFile(db: string): Promise<Embedded> {
  if (!existsSync(db)) {
    throw new Error(
      `no onceflow database at ${db} (set --db, ONCEFLOW_DB or embedded.db in the config file)`,
    );
  }
  const embedded = createEmbedded({ path: db });
  try {
    await embedded.start();
    return embedded;
  } catch (err) {
    await embedded.close();
    throw err;
  }
}

/** `--store embedded`: the file's event record, inbox and inbox browser. */
export async function openEmbeddedStore(options: TargetOptions): Promise<StoreTarget> {
  const embedded = await openFile(options.db);
  return {
    records: embedded.records,
    inbox: embedded.inbox,
    browser: createSqliteInboxBrowser(embedded.db),
    close: () => embedded.close(),
  };
}

/** `--to embedded`: the file's queue `--queue` (queues in the file exist implicitly). */
export async function openEmbeddedTransport(options: TargetOptions): Promise<TransportTarget> {
  const embedded = await openFile(options.db);
  return {
    transport: embedded.transport(options.queue),
    destination: `embedded queue "${options.queue}" in ${options.db}`,
    close: () => embedded.close(),
  };
}
