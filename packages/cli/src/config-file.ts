import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { z } from 'zod';
import { CommandLineError } from './command-line-error.js';
import { configSchema, type OnceflowConfig } from './config.js';

/** The names looked for in the working directory, in this order; two present is an error. */
export const CONFIG_FILES = [
  'onceflow.config.json',
  'onceflow.config.mjs',
  'onceflow.config.js',
  'onceflow.config.ts',
] as const;

/** A config file once read: where it was, and what it holds. */
export interface LoadedConfig {
  /** Undefined when there is none. */
  readonly path: string | undefined;
  readonly config: OnceflowConfig;
}

const issueLine = (issue: z.core.$ZodIssue): string => {
  const at = issue.path.map(String).join('.');
  return `${at || '(top level)'}: ${issue.message}`;
};

async function read(path: string): Promise<unknown> {
  if (path.endsWith('.json')) {
    const text = await readFile(path, 'utf8');
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new CommandLineError(`${path}: not valid JSON: ${(err as Error).message}`);
    }
  }
  let module: { default?: unknown };
  try {
    module = await import(pathToFileURL(path).href);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_UNKNOWN_FILE_EXTENSION')
      throw new CommandLineError(
        `${path}: this Node cannot import TypeScript: use onceflow.config.mjs, or run with NODE_OPTIONS=--import=tsx (Node 22.18 and later import it as is)`,
      );
    throw new CommandLineError(`${path}: ${(err as Error).message}`);
  }
  if (module.default === undefined)
    throw new CommandLineError(`${path}: no default export (export default { … })`);
  return module.default;
}

/**
 * Finds and reads the config file: `explicit` (`--config` or `ONCEFLOW_CONFIG`, relative to
 * `cwd`), else the one `CONFIG_FILES` name present in `cwd`, else none (`{}`). JSON is parsed;
 * `.mjs`, `.js` and `.ts` are imported and their default export taken (a `.ts` file needs a Node
 * that imports TypeScript). The content is validated by `configSchema`; a relative `embedded.db`
 * is made relative to the file's folder. Every problem throws `CommandLineError` naming the file
 * and, for content, each bad field: `onceflow.config.json: postgres.url: Invalid input: …`.
 *
 * @example
 * const { config } = await loadConfig(process.cwd(), undefined);
 */
export async function loadConfig(cwd: string, explicit: string | undefined): Promise<LoadedConfig> {
  let path: string;
  if (explicit !== undefined) {
    path = isAbsolute(explicit) ? explicit : resolve(cwd, explicit);
    if (!existsSync(path)) throw new CommandLineError(`--config: no file at ${path}`);
  } else {
    const found = CONFIG_FILES.filter((name) => existsSync(resolve(cwd, name)));
    if (found.length === 0) return { path: undefined, config: {} };
    if (found.length > 1)
      throw new CommandLineError(
        `${found.join(' and ')} in ${cwd}: keep one, or name it with --config`,
      );
    path = resolve(cwd, found[0] as string);
  }
  const parsed = configSchema.safeParse(await read(path));
  if (!parsed.success) {
    const lines = parsed.error.issues.map(issueLine);
    throw new CommandLineError(`${basename(path)} (${path}):\n  ${lines.join('\n  ')}`);
  }
  const config = parsed.data;
  const db = config.embedded?.db;
  if (db !== undefined && !isAbsolute(db))
    return { path, config: { ...config, embedded: { db: resolve(dirname(path), db) } } };
  return { path, config };
}
