/**
 * Where a command writes. Results go to `out` (what a script pipes on), diagnostics and refusals
 * to `err`. Each call is one line, without its newline. Commands never touch `process` directly,
 * so they run the same in tests and in the `onceflow` binary.
 */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

/**
 * An output writing to two streams (the binary passes `process.stdout` and `process.stderr`).
 *
 * @example
 * const output = streamOutput(process.stdout, process.stderr);
 */
export function streamOutput(
  stdout: { write(chunk: string): unknown },
  stderr: { write(chunk: string): unknown },
): Output {
  return {
    out: (line) => stdout.write(`${line}\n`),
    err: (line) => stderr.write(`${line}\n`),
  };
}

/** Prints a value as one pretty JSON document on `out` (the `--json` form of every command). */
export function printJson(output: Output, value: unknown): void {
  output.out(JSON.stringify(value, null, 2));
}
