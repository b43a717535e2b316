import { defineConfig } from 'vitest/config';

/** Tests run against source: the `@onceflow/source` export condition maps each workspace package to its src. */
export const sharedConfig = defineConfig({
  resolve: { conditions: ['@onceflow/source'] },
  ssr: { resolve: { conditions: ['@onceflow/source'] } },
  test: { testTimeout: 30_000, hookTimeout: 30_000, pool: 'forks' },
});
