import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The longest suffix migrations append to the table name (`_conflicts_seen_idx`). */
const LONGEST_SUFFIX = 19;
const PG_NAME_MAX = 63;

/** Unquoted-style identifiers only: letters, digits, `_`, not starting with a digit. Always quoted in SQL. */
export const identifierSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'use letters, digits and _ only, not starting with a digit')
  .max(PG_NAME_MAX);

export const tableNameSchema = identifierSchema.max(
  PG_NAME_MAX - LONGEST_SUFFIX,
  `at most ${PG_NAME_MAX - LONGEST_SUFFIX} characters (index names append suffixes)`,
);

export const DEFAULT_SCHEMA = 'public';
export const DEFAULT_TABLE = 'onceflow_inbox';
/** Applied migrations are recorded here, one table per schema, keyed by inbox table. */
export const MIGRATIONS_TABLE = 'onceflow_migrations';

const quote = (name: string): string => `"${name}"`;

/** The quoted SQL names of one inbox: its schema, table, sibling tables and a short stable key. */
export interface InboxNames {
  readonly schema: string;
  readonly table: string;
  /** `"schema"."table"`. */
  readonly qualified: string;
  /** `"schema"."table_<suffix>"`: a sibling table. */
  sibling(suffix: string): string;
  /** `"table_<suffix>"`: an index name (indexes live in their table's schema). */
  local(suffix: string): string;
  /** 10 hex characters naming this (schema, table), used in prepared statement names. */
  readonly key: string;
}

/** Builds the names; callers validate `schema` and `table` first (see `identifierSchema`). */
export function inboxNames(schema: string, table: string): InboxNames {
  return {
    schema: quote(schema),
    table: quote(table),
    qualified: `${quote(schema)}.${quote(table)}`,
    sibling: (suffix) => `${quote(schema)}.${quote(`${table}_${suffix}`)}`,
    local: (suffix) => quote(`${table}_${suffix}`),
    key: createHash('sha256').update(`${schema}.${table}`).digest('hex').slice(0, 10),
  };
}
