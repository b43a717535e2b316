import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// The two fault samples mostly wait on their child processes: run both files at once.
export default mergeConfig(sharedConfig, {
  test: { poolOptions: { forks: { minForks: 2, maxForks: 2 } } },
});
