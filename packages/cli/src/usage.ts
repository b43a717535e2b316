/** The `--help` text. Kept beside the parser so the two change together. */
export const USAGE = `onceflow: operator commands for an onceflow pipeline

Usage:
  onceflow dead-letters list [--limit N] [--json]
  onceflow dead-letters show <id> [--json]
  onceflow dead-letters redrive (<id>... | --all) [--apply] [--json]
  onceflow dead-letters purge (<id>... | --all) [--apply] [--json]
  onceflow replay --since <iso> [--until <iso>] [--source S] [--type T] [--limit N]
                  [--replay-id ID] [--to STORE] [--apply] [--json]
  onceflow inbox stats [--json]
  onceflow inbox purge --older-than <duration> [--apply] [--json]

Every command that changes something is a DRY RUN unless --apply is given:
it prints how many items it would touch, and which, and changes nothing.

Target (flags win over environment variables):
  --store NAME     embedded (default) or postgres; env ONCEFLOW_STORE
  --db PATH        embedded SQLite file (default .onceflow/onceflow.db); env ONCEFLOW_DB
  --queue NAME     embedded queue (default events); env ONCEFLOW_QUEUE
  --pg-url URL     PostgreSQL connection string for --store postgres; env ONCEFLOW_PG_URL
  --to NAME        replay: publish through this store's transport (default: --store)

Replay copies carry the id "<id>#replay-<replay-id>" and the header x-onceflow-replay-of,
so workers process them again on purpose. Reuse --replay-id to resume a replay that stopped.

Durations: 45s, 15m, 12h, 30d, 2w, 1d12h. Dates: ISO-8601, UTC unless a zone is given.
Exit codes: 0 done, 1 failed, 2 usage error.`;
