#!/usr/bin/env node
// The packages as a user gets them: `pnpm pack` every public package (pnpm rewrites `workspace:`
// ranges), `npm install` the tarballs with their non-optional peers into an empty project
// outside the workspace, then, with plain node there:
//   - import every entry point, and find every module the packed files import declared in their
//     package.json; run the CLI's binary;
//   - type-check and run the README's Quick start (embedded default) against a signed Stripe delivery;
//   - run the testing kit's property test on a handler (scripts/packed-install/testing-kit.mjs);
//   - run one broker stack: PostgreSQL inbox + RabbitMQ (scripts/packed-install/broker-stack.mjs).
// Needs `pnpm build` first, PostgreSQL and RabbitMQ on loopback (ONCEFLOW_PG_URL, ONCEFLOW_AMQP_URL)
// and the npm registry. Fails printing the output of the step that failed and keeps its project
// for a look; `--keep` keeps it after success too. Most of its time is better-sqlite3 compiling
// from source (about 100 s of CPU; no prebuilt binary is reachable here).
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { publicPackages, root } from './public-packages.mjs';

const started = Date.now();
const packages = publicPackages();
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

// npm in the project sees the environment a user's shell has, not pnpm's own settings.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(npm|pnpm)_/i.test(k)),
);

/** Runs one step; on failure prints its output and exits 1, keeping the project to look at. */
function step(what, cmd, args, { cwd = project, timeoutMs = 120_000 } = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    env,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 1 << 26,
  });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  if (r.status !== 0) {
    const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
    console.error(`\npacked-install: ${what} FAILED (${why}): ${cmd} ${args.join(' ')}\n${output}`);
    console.error(`\nThe project is kept at ${project}`);
    process.exit(1);
  }
  console.log(`packed-install: ${what} (${Math.round((Date.now() - started) / 1000)} s)`);
  return output;
}

/**
 * The README's Quick start, listening on $PORT instead of 3000 (the one change made to it), after
 * checking that its `npm install` line names every package its code imports.
 */
function readmeQuickStart() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = /^## Quick start\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('README.md: no ```ts block under "## Quick start"');
  const installed = /^npm install (.+)$/m.exec(section)?.[1].split(/\s+/) ?? [];
  for (const [, specifier] of code.matchAll(/from '([^.'][^']*)'/g)) {
    const name = specifier
      .split('/')
      .slice(0, specifier.startsWith('@') ? 2 : 1)
      .join('/');
    if (!specifier.startsWith('node:') && !installed.includes(name))
      throw new Error(
        `README.md: the Quick start imports ${specifier}; its npm install line lacks ${name}`,
      );
  }
  const listen = '.listen(3000)';
  if (code.split(listen).length !== 2)
    throw new Error(`README.md: the Quick start must call ${listen} once (this check replaces it)`);
  return code.replace(listen, '.listen(Number(process.env.PORT))');
}

const quickStart = readmeQuickStart();
for (const pkg of packages) {
  for (const entry of pkg.entries) {
    if (!existsSync(entry.types))
      throw new Error(`${relative(root, entry.types)} is missing: run \`pnpm build\` first`);
  }
}

const project = mkdtempSync(join(tmpdir(), 'onceflow-packed-'));
const tarballs = join(project, 'tarballs');
mkdirSync(tarballs);
step(
  `packed ${packages.length} packages`,
  'pnpm',
  ['-r', ...packages.flatMap((p) => ['--filter', p.name]), 'pack', '--pack-destination', tarballs],
  { cwd: root },
);

// What a user adds: the packages, the peers each README names (optional ones aside), zod for the
// Quick start's schema; and for this check: TypeScript and Node's types to compile the Quick start,
// Stripe's SDK to sign deliveries. Versions are the ones the workspace uses.
const dependencies = {};
for (const pkg of packages) {
  const tarball = `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.manifest.version}.tgz`;
  dependencies[pkg.name] = `file:./tarballs/${tarball}`;
  for (const [peer, range] of Object.entries(pkg.manifest.peerDependencies ?? {})) {
    const optional = pkg.manifest.peerDependenciesMeta?.[peer]?.optional;
    if (!peer.startsWith('@onceflow/') && !optional) dependencies[peer] ??= range;
  }
}
const core = packages.find((p) => p.name === '@onceflow/core').manifest;
const rootManifest = readJson(join(root, 'package.json'));
Object.assign(dependencies, {
  zod: core.dependencies.zod,
  stripe: core.devDependencies.stripe,
  typescript: rootManifest.devDependencies.typescript,
  '@types/node': rootManifest.devDependencies['@types/node'],
});
writeFileSync(
  join(project, 'package.json'),
  JSON.stringify({ name: 'packed-install', private: true, type: 'module', dependencies }, null, 2),
);
step(
  `npm install ${Object.keys(dependencies).length} packages`,
  'npm',
  ['install', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'],
  { timeoutMs: 360_000 },
);

cpSync(join(root, 'scripts/packed-install'), project, { recursive: true });
const specifiers = packages.flatMap((p) =>
  p.entries.map((e) => (e.key === '.' ? p.name : `${p.name}/${e.key.slice(2)}`)),
);
step(`${specifiers.length} entry points import`, 'node', ['imports.mjs', ...specifiers]);
step('every import is declared', 'node', ['declared-imports.mjs', ...packages.map((p) => p.name)]);
const cli = packages.find((p) => p.manifest.bin?.onceflow);
if (cli) {
  const version = step('onceflow --version', 'node', ['node_modules/.bin/onceflow', '--version']);
  if (version !== cli.manifest.version)
    throw new Error(
      `onceflow --version printed "${version}", the package is ${cli.manifest.version}`,
    );
}

writeFileSync(join(project, 'quickstart.ts'), quickStart);
writeFileSync(
  join(project, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      skipLibCheck: false, // the packages' declarations are checked too
      types: ['node'],
    },
    files: ['quickstart.ts', 'fulfil.d.ts'],
  }),
);
step('README Quick start type-checks', 'node', ['node_modules/typescript/bin/tsc', '-p', '.']);
step('README Quick start runs', 'node', ['quickstart.mjs'], { timeoutMs: 60_000 });
step('testing kit catches a double charge', 'node', ['testing-kit.mjs'], { timeoutMs: 60_000 });
step('PostgreSQL inbox + RabbitMQ stack runs', 'node', ['broker-stack.mjs'], { timeoutMs: 60_000 });

if (process.argv.includes('--keep')) console.log(`packed-install: the project is at ${project}`);
else rmSync(project, { recursive: true, force: true });
console.log(`packed-install: passed in ${Math.round((Date.now() - started) / 1000)} s`);
