import { readFileSync } from 'node:fs';

/**
 * The version of this package, read from its package.json (one level above `src/` and `dist/`
 * alike, and always part of a published package).
 */
export function cliVersion(): string {
  const url = new URL('../package.json', import.meta.url);
  const { version } = JSON.parse(readFileSync(url, 'utf8')) as { version: string };
  return version;
}
