// Every module a packed package's files import (its .js and .d.ts) is declared in its own
// package.json (dependencies, peer or optional dependencies) or is a Node.js built-in. npm hoists
// packages, so an undeclared import could still load here; this catches it from the files.
// Usage: node declared-imports.mjs <package name>…
import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

const builtins = new Set(builtinModules);
const statements = [
  /^\s*(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]/gm, // import … from 'x', export … from 'x'
  /^\s*import\s*['"]([^'"]+)['"]/gm, // import 'x'
  /^[^*\n/]*\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm, // import('x'), outside comments
];
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const files = (dir) =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile() && /\.(m?js|d\.m?ts)$/.test(f.name))
    .map((f) => join(f.parentPath, f.name));

const problems = [];
for (const name of process.argv.slice(2)) {
  const dir = join('node_modules', name);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const declared = new Set([
    name,
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
    ...Object.keys(manifest.optionalDependencies ?? {}),
  ]);
  for (const file of files(dir)) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of statements) {
      for (const [, specifier] of text.matchAll(pattern)) {
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        const pkg = packageOf(specifier);
        if (!declared.has(pkg) && !builtins.has(pkg))
          problems.push(`${file.slice('node_modules/'.length)} imports ${specifier}`);
      }
    }
  }
}
if (problems.length) {
  console.error(
    `Imports their package.json does not declare:\n  ${[...new Set(problems)].join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`${process.argv.length - 2} packages import only what they declare`);
