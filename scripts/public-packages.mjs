// The workspace's published packages and their entry points, read from each package.json: the one
// list the API reports, the API reference and the packed-install check are driven by.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const root = new URL('..', import.meta.url).pathname;

/** The folders pnpm-workspace.yaml's `packages:` globs (all of the form `<folder>/*`) name. */
function workspaceFolders() {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const list = /^packages:\n((?:\s+-.*\n)+)/m.exec(yaml)?.[1] ?? '';
  return [...list.matchAll(/-\s*['"]?([^'"\s]+)\/\*['"]?/g)].map((m) => m[1]);
}

/**
 * Every non-private workspace package, with one entry per `exports` key:
 * `name` is `index` for `.` and the subpath otherwise (`./kit` → `kit`), `types` the built
 * declaration file the key resolves to.
 */
export function publicPackages() {
  return workspaceFolders()
    .flatMap((d) => readdirSync(join(root, d)).map((p) => join(root, d, p)))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter(({ manifest }) => !manifest.private)
    .map(({ dir, manifest }) => ({
      dir,
      name: manifest.name,
      manifest,
      entries: Object.entries(manifest.exports ?? {}).map(([key, target]) => {
        if (typeof target?.types !== 'string')
          throw new Error(`${manifest.name}: exports["${key}"] has no "types" condition`);
        return {
          key,
          name: key === '.' ? 'index' : key.replace(/^\.\//, '').replaceAll('/', '-'),
          types: join(dir, target.types),
        };
      }),
    }));
}
