#!/usr/bin/env node
import { streamOutput } from './output.js';
import { runCli } from './run.js';

// The binary only wires process to runCli; every command is testable without it.
process.exitCode = await runCli(process.argv.slice(2), {
  output: streamOutput(process.stdout, process.stderr, process.env),
  env: process.env,
  cwd: process.cwd(),
});
