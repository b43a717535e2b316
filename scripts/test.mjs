#!/usr/bin/env node
// `pnpm test`: brings up what the project can start, fails naming anything missing, never skips.
// Then: typecheck, lint, circular-import check, build + publint of every package, the API reports,
// the API reference (TypeDoc, validation only), the packed tarballs installed with npm in an empty
// project (README Quick start and a broker stack run there), and every package's tests
// (in two lanes, scripts/test-lanes.mjs), ending with one plain line "N passed, N failed".
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { up as brokersUp } from './brokers.mjs';
import { missingServices } from './services.mjs';
import { runLanes } from './test-lanes.mjs';

const root = new URL('..', import.meta.url).pathname;
const run = (cmd, args, opts = {}) => {
  console.log(`\n$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  return r.status ?? 1;
};

// The README's set-up must install the pnpm that packageManager pins (checked before anything slow).
if (run('node', ['scripts/check-setup.mjs']) !== 0) process.exit(1);

// Kafka and the SQS server are started here when not already running (and stopped at the end);
// ONCEFLOW_KAFKA_BROKERS / ONCEFLOW_SQS_ENDPOINT point the tests at brokers of your own instead.
const wanted = [
  ...(process.env.ONCEFLOW_KAFKA_BROKERS ? [] : ['kafka']),
  ...(process.env.ONCEFLOW_SQS_ENDPOINT ? [] : ['sqs']),
];
let started = [];
try {
  started = await brokersUp(wanted);
} catch (err) {
  console.error(`\nCannot start the brokers: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}
process.on('exit', () => {
  if (started.length)
    spawnSync('node', ['scripts/brokers.mjs', 'down', ...started], { cwd: root, stdio: 'inherit' });
});

// Tools from Debian's packages (`.ci/run` installs them): promtool for the alert rules' tests,
// chromium for the console's browser tests (ONCEFLOW_CHROMIUM_PATH points elsewhere).
const tools = [
  ['promtool', 'prometheus'],
  [process.env.ONCEFLOW_CHROMIUM_PATH ?? 'chromium', 'chromium'],
].filter(([cmd]) => spawnSync('sh', ['-c', `command -v "${cmd}"`]).status !== 0);
if (tools.length > 0) {
  console.error(
    `\nCannot run the tests: missing ${tools.map(([cmd]) => cmd).join(', ')}; install with\n  apt-get install ${tools.map(([, pkg]) => pkg).join(' ')}`,
  );
  process.exit(1);
}

const missing = await missingServices();
if (missing.length > 0) {
  console.error(
    `\nCannot run the tests: these services are not reachable:\n  - ${missing.join('\n  - ')}`,
  );
  process.exit(1);
}

for (const [cmd, args] of [
  ['pnpm', ['exec', 'turbo', 'run', 'typecheck', '--output-logs=errors-only']],
  ['pnpm', ['exec', 'biome', 'check', '.']],
  ['pnpm', ['run', 'check:cycles']],
  ['pnpm', ['run', 'check:packages']],
  ['pnpm', ['run', 'api:check']],
  ['pnpm', ['run', 'docs:check']],
  ['pnpm', ['run', 'check:packed']],
]) {
  if (run(cmd, args) !== 0) {
    console.error(`\nFAILED: ${cmd} ${args.join(' ')}`);
    process.exit(1);
  }
}

const dirs = ['packages', 'apps', 'examples'].flatMap((d) =>
  readdirSync(join(root, d))
    .map((p) => join(root, d, p))
    .filter((p) => existsSync(join(p, 'vitest.config.ts'))),
);
const results = await runLanes(root, dirs);
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const failedPackages = results.filter((r) => r.status !== 0).map((r) => r.where);
const failedTests = results.flatMap((r) => r.failures);
console.log(`\nSuite times: ${results.map((r) => `${r.where} ${r.secs} s`).join(', ')}`);
// The capability matrix in the docs is generated from what the conformance suites just observed.
run('node', ['scripts/capability-matrix.mjs']);
if (failedPackages.length) console.error(`\nFailing packages: ${failedPackages.join(', ')}`);
// Named again at the very end, where a log cut to its last lines still shows them.
for (const t of failedTests) console.error(`FAILED ${t}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failedPackages.length || failed ? 1 : 0);
