import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type { InboxNames } from './names.js';

/** The SQL files shipped in the package's `migrations/` folder (beside `src/` and `dist/`). */
const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);
const FILE_NAME = /^(\d{3}_[a-z0-9_]+)\.sql$/;

export interface Migration {
  /** File name without `.sql`, e.g. `001_inbox`: the order and the record key. */
  readonly name: string;
  readonly sql: string;
}

let loaded: Promise<Migration[]> | undefined;

/** Reads the shipped migrations once per process, in file-name order. */
export function loadMigrations(): Promise<Migration[]> {
  loaded ??= (async () => {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => FILE_NAME.test(f)).sort();
    return Promise.all(
      files.map(async (file) => ({
        name: file.replace(/\.sql$/, ''),
        sql: await readFile(new URL(file, MIGRATIONS_DIR), 'utf8'),
      })),
    );
  })();
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

/**
 * Fills the placeholders: `{{schema}}`, `{{table}}` (qualified), `{{table:<suffix>}}` (a
 * qualified sibling table), `{{name:<suffix>}}` (an index name). Unknown placeholders throw, so a
 * typo never reaches the database.
 */
export function renderMigration(sql: string, names: InboxNames): string {
  return sql.replace(/\{\{([a-z]+)(?::([a-z_]+))?\}\}/g, (match, kind: string, suffix?: string) => {
    if (kind === 'schema' && suffix === undefined) return names.schema;
    if (kind === 'table' && suffix === undefined) return names.qualified;
    if (kind === 'table' && suffix !== undefined) return names.sibling(suffix);
    if (kind === 'name' && suffix !== undefined) return names.local(suffix);
    throw new Error(`unknown migration placeholder ${match}`);
  });
}

export const checksum = (sql: string): string => createHash('sha256').update(sql).digest('hex');
