import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs promtool (Debian's `prometheus` package); rejects with its output when it fails. */
export async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('promtool', args);
    return stdout + stderr;
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT')
      throw new Error('promtool is not installed: apt-get install -y prometheus');
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

export interface PrometheusRule {
  readonly name: string;
  readonly query: string;
  readonly type: 'alerting' | 'recording';
  readonly health: string;
  readonly lastError?: string;
  readonly state?: 'inactive' | 'pending' | 'firing';
  readonly lastEvaluation: string;
}

export interface PrometheusServer extends AsyncDisposable {
  readonly url: string;
  /** An instant query's result vector. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  rules(): Promise<PrometheusRule[]>;
}

/**
 * A real Prometheus (the `prometheus` binary) on a free loopback port, scraping `targets` (job
 * name → /metrics URL) every second and evaluating `ruleFiles` every second, with its data in a
 * temporary directory removed on dispose.
 */
export async function startPrometheus(options: {
  readonly targets: Readonly<Record<string, string>>;
  readonly ruleFiles: readonly string[];
}): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-prometheus-'));
  const port = await freePort();
  const jobs = Object.entries(options.targets).map(([job, target]) => {
    const u = new URL(target);
    return `  - job_name: ${job}\n    metrics_path: ${u.pathname}\n    static_configs:\n      - targets: ['${u.host}']`;
  });
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    'rule_files:',
    ...options.ruleFiles.map((f) => `  - ${JSON.stringify(f)}`),
    'scrape_configs:',
    ...jobs,
    '',
  ].join('\n');
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (b: Buffer) => {
    log += b.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited at start:\n${log}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready within 30 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    async query(expr) {
      const data = await api<{ result: [] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      return data.result;
    },
    async rules() {
      const data = await api<{ groups: { rules: PrometheusRule[] }[] }>('/api/v1/rules');
      return data.groups.flatMap((g) => g.rules);
    },
    [Symbol.asyncDispose]: stop,
  };
}

/** The metric names a /metrics page declares (`# TYPE`), histograms' series names included. */
export function metricNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name = '', type] = m;
    names.add(name);
    if (type === 'histogram' || type === 'summary')
      for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
  }
  return names;
}

/** Every `onceflow_…` metric name in a PromQL expression. */
export const namesInQuery = (expr: string): string[] =>
  [...expr.matchAll(/\bonceflow_[a-z0-9_]+/g)].map((m) => m[0]);
