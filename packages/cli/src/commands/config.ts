import { parseArgs } from 'node:util';
import { DEFAULT_DB, DEFAULT_QUEUE } from '../args.js';
import { CONFIG_FILES } from '../config-file.js';
import type { OnceflowConfig } from '../config.js';
import { SETTINGS } from '../config.js';
import { EXIT } from '../exit-codes.js';
import { table } from '../format.js';
import { OPTIONS } from '../flags.js';
import { type Output, printJson } from '../output.js';
import { parseActor } from '../record-args.js';
import type { Env } from '../target.js';

/** Where a setting's value came from, strongest first. */
type From = `--${string}` | `env ${string}` | 'config file' | 'default' | 'unset';

/** The defaults a setting has when nothing gives it one (others stay unset, or the store's own). */
const DEFAULTS: Readonly<Record<string, string>> = {
  ONCEFLOW_STORE: 'embedded',
  ONCEFLOW_QUEUE: DEFAULT_QUEUE,
  ONCEFLOW_DB: DEFAULT_DB,
};

/** `postgres://user:secret@host` → `postgres://user:***@host`. */
const maskUrl = (value: string) => value.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');

export interface ConfigShowInput {
  readonly argv: readonly string[];
  /** The environment as the process has it, before the file. */
  readonly env: Env;
  readonly path: string | undefined;
  readonly config: OnceflowConfig;
  readonly cwd: string;
  readonly json?: boolean | undefined;
}

/**
 * Prints the settings a command would run with and where each comes from (a flag, a variable,
 * the config file, the default), passwords in URLs masked, and which config file was read.
 * Opens nothing: it checks the file, not the stores. Read-only.
 *
 * @example
 * await showConfig({ argv, env: process.env, path, config, cwd: process.cwd() }, output);
 */
export function showConfig(input: ConfigShowInput, output: Output): number {
  const { values } = parseArgs({
    args: [...input.argv],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
  });
  const rows = SETTINGS.map(({ field, variable, flag, value }) => {
    const fromFlag = flag === undefined ? undefined : values[flag];
    let from: From = 'unset';
    let shown: string | number | undefined;
    if (typeof fromFlag === 'string') [from, shown] = [`--${flag}`, fromFlag];
    else if (variable && input.env[variable] !== undefined)
      [from, shown] = [`env ${variable}`, input.env[variable]];
    else if (value(input.config) !== undefined)
      [from, shown] = ['config file', value(input.config)];
    else if (variable && DEFAULTS[variable] !== undefined)
      [from, shown] = ['default', DEFAULTS[variable]];
    const text = shown === undefined ? undefined : maskUrl(String(shown));
    return { setting: field, value: text ?? null, from };
  });
  // The defaults that depend on another setting, as the commands apply them.
  const row = (setting: string) => rows.find((r) => r.setting === setting);
  const to = row('to');
  if (to?.from === 'unset' && row('store')?.value === 'embedded')
    Object.assign(to, { value: 'embedded', from: 'default' });
  const actor = row('defaults.actor');
  if (actor?.from === 'unset')
    Object.assign(actor, { value: parseActor(undefined), from: 'default' });
  const looked = `none (looked for ${CONFIG_FILES.join(', ')} in ${input.cwd})`;
  if (input.json) {
    printJson(output, { configFile: input.path ?? null, settings: rows });
    return EXIT.ok;
  }
  output.out(`config file: ${input.path ?? looked}`);
  const set = rows.filter((r) => r.from !== 'unset');
  for (const line of table(
    ['SETTING', 'VALUE', 'FROM'],
    set.map((r) => [r.setting, r.value ?? '-', r.from]),
    80,
  ))
    output.out(line);
  return EXIT.ok;
}
