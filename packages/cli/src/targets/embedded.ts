import { existsSync } from 'node:fs';
import { createEmbedded } from '@onceflow/embedded';
import type { Target, TargetOptions } from '../target.js';
import { createSqliteInboxBrowser } from './sqlite-browser.js';

/**
 * Opens the embedded SQLite file at `--db` with its queue `--queue`: inbox, inbox browser and
 * transport. Refuses a path where no file exists rather than creating an empty store, so a typo
 * in `--db` fails loudly instead of reporting "No dead letters".
 */
export async function openEmbedded(options: TargetOptions): Promise<Target> {
  if (!existsSync(options.db)) {
    throw new Error(`no onceflow database at ${options.db} (set --db or ONCEFLOW_DB)`);
  }
  const embedded = createEmbedded({ path: options.db });
  try {
    await embedded.start();
    const transport = embedded.transport(options.queue);
    await transport.start();
    return {
      inbox: embedded.inbox,
      browser: createSqliteInboxBrowser(embedded.db),
      transport,
      close: () => embedded.close(),
    };
  } catch (err) {
    await embedded.close();
    throw err;
  }
}
