import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// The fault samples (one file per stack) mostly wait on their child processes and brokers: three
// at once. Each stack's servers have ports of their own (see src/brokers.ts).
export default mergeConfig(sharedConfig, {
  test: { poolOptions: { forks: { minForks: 3, maxForks: 3 } } },
});
