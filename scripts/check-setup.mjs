#!/usr/bin/env node
// The README's set-up names the exact pnpm that package.json's `packageManager` pins: a newer 10.x
// refuses to switch to the pin on a fresh machine, so `npm install -g pnpm@10` leaves a newcomer
// stuck while CI stays green. Fails naming both versions when the README or .ci/run disagrees.
import { readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const read = (file) => readFileSync(`${root}${file}`, 'utf8');

/** Every pnpm version written as `pnpm@<version>` in `text`, with its line number. */
export function pnpmVersionsIn(text) {
  return text
    .split('\n')
    .flatMap((line, i) => [...line.matchAll(/\bpnpm@([\w.-]+)/g)].map((m) => [m[1], i + 1]));
}

/** The problems found, one line each; empty when the set-up is consistent. */
export function setupProblems() {
  // `packageManager` may carry a `+sha512.…` integrity suffix; the version is what comes before it.
  const pinned = /^pnpm@([^+]+)/.exec(JSON.parse(read('package.json')).packageManager ?? '')?.[1];
  if (!pinned) return ['package.json: packageManager is not "pnpm@<version>"'];
  const problems = [];
  const readme = pnpmVersionsIn(read('README.md'));
  if (readme.length === 0) problems.push(`README.md: no "npm install -g pnpm@${pinned}" found`);
  for (const [file, found] of [
    ['README.md', readme],
    ['.ci/run', pnpmVersionsIn(read('.ci/run'))],
  ]) {
    for (const [version, line] of found) {
      if (version !== pinned)
        problems.push(
          `${file}:${line} installs pnpm@${version}, package.json packageManager pins pnpm@${pinned}`,
        );
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = setupProblems();
  if (problems.length) {
    console.error(`The set-up and packageManager disagree:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log('set-up: README.md and .ci/run install the pinned pnpm');
}
