import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

export default mergeConfig(sharedConfig, {
  test: {
    // Type tests (`*.test-d.ts`, checked by tsc, never run) count as tests: a type error fails them.
    typecheck: {
      enabled: true,
      include: ['test/types/**/*.test-d.ts'],
      // Only the type tests and what they import, so the check stays quick.
      tsconfig: 'test/types/tsconfig.json',
    },
  },
});
