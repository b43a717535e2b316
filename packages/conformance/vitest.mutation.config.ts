import { fileURLToPath } from 'node:url';
import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

/**
 * The conformance suite over the memory transport or store, for `pnpm mutation` (StrykerJS).
 * The transport's run adds the memory transport's own unit tests, for what the contract leaves to
 * each adapter (its options, its broker sharing, its error text, its timers);
 * `mutation/memory-transport-contract.stryker.mjs` runs the conformance suite alone.
 * Stryker copies the tree to a sandbox and mutates the copies; the workspace links in
 * node_modules point back to the original packages, so the aliases below resolve `@onceflow/*`
 * to the source next to this file (the sandbox's, when Stryker runs it). `MUTATION_SUITE` picks
 * the suite: `transport` (default) or `store`.
 */
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

const suites: Record<string, string[]> = {
  transport: [
    'packages/conformance/test/memory.conformance.test.ts',
    'packages/core/test/memory/transport.test.ts',
    'packages/core/test/memory/transport-timers.test.ts',
  ],
  // The conformance suite alone, for what it detects without the unit tests.
  'transport-contract': ['packages/conformance/test/memory.conformance.test.ts'],
  store: ['packages/conformance/test/memory-store.conformance.test.ts'],
};
const suite = process.env.MUTATION_SUITE ?? 'transport';
const files = suites[suite];
if (!files) throw new RangeError(`MUTATION_SUITE must be one of ${Object.keys(suites).join(', ')}`);

export default mergeConfig(sharedConfig, {
  resolve: {
    alias: [
      { find: /^@onceflow\/core$/, replacement: here('../core/src/index.ts') },
      { find: /^@onceflow\/core\/kit$/, replacement: here('../core/src/kit.ts') },
      { find: /^@onceflow\/core\/testing$/, replacement: here('../core/src/testing.ts') },
      { find: /^@onceflow\/conformance$/, replacement: here('./src/index.ts') },
    ],
  },
  test: {
    root: here('../..'),
    include: files,
  },
});
