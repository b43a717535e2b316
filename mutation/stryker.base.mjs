/**
 * What every `pnpm mutation` run shares. Stryker copies only the packages the suites need into
 * its sandbox (`.stryker-tmp/`) and mutates the copies there, never the working tree.
 */
export const base = {
  packageManager: 'pnpm',
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'packages/conformance/vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  concurrency: 2,
  incremental: true,
  // The scenarios wait on real timers (locks, delays); a loaded machine needs room.
  timeoutMS: 20_000,
  timeoutFactor: 2,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  ignorePatterns: [
    '/*',
    '!/package.json',
    '!/pnpm-workspace.yaml',
    '!/tsconfig.base.json',
    '!/tsconfig.dev.json',
    '!/vitest.shared.ts',
    '!/packages',
    '/packages/*',
    '!/packages/core',
    '!/packages/conformance',
    'api',
    'dist',
    'bench',
  ],
  cleanTempDir: 'always',
};

/** The config of one suite: `name` names its reports and its incremental file. */
export function suiteConfig(name, mutate) {
  return {
    ...base,
    mutate,
    incrementalFile: `reports/mutation/${name}.incremental.json`,
    htmlReporter: { fileName: `reports/mutation/${name}.html` },
    jsonReporter: { fileName: `reports/mutation/${name}.json` },
  };
}
