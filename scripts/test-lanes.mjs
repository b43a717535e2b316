// Runs every package's vitest suite in a few lanes at once (ONCEFLOW_TEST_LANES, default 2: the
// machine's two cores). Packages do not share a broker resource: each test names its own queues,
// topics, schemas and keys, and a test that stops a server starts its own on a port of its own.
// The slowest suites start first so the lanes end together; each suite's output is printed whole
// when it ends, so logs from two lanes never interleave.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Seconds each suite took in the last measured CI run (a fresh clone, two lanes): the order in
 * which lanes take them. A package missing here starts after the listed ones.
 */
const seconds = {
  'apps/demo': 380,
  'packages/chaos': 150,
  'packages/adapter-kafka': 145,
  'packages/adapter-sqs': 95,
  'packages/core': 70,
  'packages/embedded': 65,
  'packages/adapter-rabbitmq': 60,
  'packages/inbox-postgres': 55,
  'packages/adapter-bullmq': 45,
  'packages/cli': 35,
};

/** Suites that must not run beside each other: both start many processes and judge by time. */
const apart = [['apps/demo', 'packages/chaos']];

const firstLine = (text) => (text ?? '').split('\n')[0];

function runSuite(root, dir) {
  const out = join(dir, '.vitest-result.json');
  rmSync(out, { force: true });
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(
      'pnpm',
      [
        'exec',
        'vitest',
        'run',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${out}`,
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } },
    );
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code) => {
      const where = dir.slice(root.length);
      const secs = ((Date.now() - started) / 1000).toFixed(0);
      process.stdout.write(`\n$ (${where}) vitest run  [${secs} s]\n${Buffer.concat(chunks)}`);
      const result = { where, status: code ?? 1, passed: 0, failed: 0, failures: [], secs };
      if (existsSync(out)) {
        const r = JSON.parse(readFileSync(out, 'utf8'));
        result.passed = r.numPassedTests;
        result.failed = r.numFailedTests + (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
        for (const file of r.testResults ?? []) {
          const name = file.name.slice(root.length);
          if (
            file.status === 'failed' &&
            !file.assertionResults?.some((t) => t.status === 'failed')
          )
            result.failures.push(`${name}: ${firstLine(file.message)}`);
          for (const t of file.assertionResults ?? [])
            if (t.status !== 'passed')
              result.failures.push(
                `${name} > ${t.fullName} (${t.status}): ${firstLine(t.failureMessages?.[0])}`,
              );
        }
        rmSync(out, { force: true });
      }
      resolve(result);
    });
  });
}

/** Runs the suites in `dirs` (absolute paths under `root`) in lanes; resolves with every result. */
export async function runLanes(root, dirs, lanes = Number(process.env.ONCEFLOW_TEST_LANES ?? 2)) {
  const rel = (dir) => dir.slice(root.length);
  const queue = [...dirs].sort((a, b) => (seconds[rel(b)] ?? 0) - (seconds[rel(a)] ?? 0));
  const running = new Set();
  const results = [];
  const clashes = (dir) =>
    apart.some((group) => group.includes(rel(dir)) && [...running].some((r) => group.includes(r)));
  const next = () => {
    const i = queue.findIndex((dir) => !clashes(dir));
    return i < 0 ? undefined : queue.splice(i, 1)[0];
  };
  await new Promise((resolve) => {
    const fill = () => {
      if (queue.length === 0 && running.size === 0) return resolve();
      while (running.size < Math.max(1, lanes)) {
        const dir = next();
        if (!dir) break;
        running.add(rel(dir));
        runSuite(root, dir).then((r) => {
          running.delete(rel(dir));
          results.push(r);
          fill();
        });
      }
    };
    fill();
  });
  return results;
}
