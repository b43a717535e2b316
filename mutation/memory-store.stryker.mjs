import { suiteConfig } from './stryker.base.mjs';

/** The memory store, killed only by the store conformance suite run over it. */
process.env.MUTATION_SUITE = 'store';

export default suiteConfig('memory-store', [
  'packages/core/src/memory/store.ts',
  'packages/core/src/memory/record-row.ts',
  'packages/core/src/memory/keyed-rows.ts',
]);
