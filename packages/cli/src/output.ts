import { colorFor, paint, type Tone } from './color.js';
import type { Env } from './target.js';

/**
 * Where a command writes. Results go to `out` (what a script pipes on), diagnostics, refusals and
 * progress to `err`. Each call is one line, without its newline. Commands never touch `process`
 * directly, so they run the same in tests and in the `onceflow` binary. `color` says which
 * streams may carry ANSI colours (none when absent); `--json` output never does.
 */
export interface Output {
  out(line: string): void;
  err(line: string): void;
  readonly color?: { readonly out: boolean; readonly err: boolean } | undefined;
}

/**
 * An output writing to two streams (the binary passes `process.stdout` and `process.stderr`).
 * With `env`, each stream gets colour by `colorFor` (a TTY, `NO_COLOR`, `FORCE_COLOR`); without
 * it, none.
 *
 * @example
 * const output = streamOutput(process.stdout, process.stderr, process.env);
 */
export function streamOutput(
  stdout: { write(chunk: string): unknown; readonly isTTY?: boolean | undefined },
  stderr: { write(chunk: string): unknown; readonly isTTY?: boolean | undefined },
  env?: Env,
): Output {
  return {
    out: (line) => stdout.write(`${line}\n`),
    err: (line) => stderr.write(`${line}\n`),
    color: env && { out: colorFor(stdout, env), err: colorFor(stderr, env) },
  };
}

/** `text` coloured for `out` when that stream takes colour. */
export const toneOut = (output: Output, tone: Tone, text: string): string =>
  paint(output.color?.out, tone, text);

/** `text` coloured for `err` when that stream takes colour. */
export const toneErr = (output: Output, tone: Tone, text: string): string =>
  paint(output.color?.err, tone, text);

/** Prints a value as one pretty JSON document on `out` (the `--json` form of every command). */
export function printJson(output: Output, value: unknown): void {
  output.out(JSON.stringify(value, null, 2));
}
