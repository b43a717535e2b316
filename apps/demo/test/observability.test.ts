import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/run.js';
import {
  type PrometheusRule,
  metricNames,
  namesInQuery,
  promtool,
  startPrometheus,
} from './prometheus.js';

// The shipped alert rules and dashboard (ops/), checked with promtool and against a real
// Prometheus scraping the demo's receiver and worker processes.
const ops = (path: string) => fileURLToPath(new URL(`../../../ops/${path}`, import.meta.url));
const alerts = ops('prometheus/alerts.yml');
const dashboard = JSON.parse(readFileSync(ops('grafana/onceflow-dashboard.json'), 'utf8')) as {
  panels: { targets?: { expr: string }[] }[];
  templating: { list: { type: string; query?: unknown }[] };
};

const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

interface Observed {
  readonly rules: PrometheusRule[];
  /** Each rule's expression evaluated once more, by rule name: the series it returns. */
  readonly results: Map<string, { metric: Record<string, string>; value: [number, string] }[]>;
  /** The metric names the receiver's and the worker's /metrics declare. */
  readonly names: Set<string>;
}

/** Runs the demo on the embedded broker; before it closes, Prometheus scrapes it and evaluates the rules. */
async function observeDemo(poison: boolean) {
  let observed: Observed | undefined;
  const summary = await runDemo({
    broker: 'embedded',
    events: 80,
    kill: false,
    poison,
    log: () => {},
    beforeClose: async ([receiver = '', worker = '']) => {
      await using prometheus = await startPrometheus({
        targets: { receiver, worker },
        ruleFiles: [alerts],
      });
      await until(
        'both demo processes scraped',
        async () => (await prometheus.query('up == 1')).length === 2,
      );
      await until('the settled record in a scrape', async () =>
        (await prometheus.query('onceflow_events{state="completed"}')).some(
          (s) => Number(s.value[1]) > 0,
        ),
      );
      // A rule evaluation that started after that scrape.
      const seen = Date.now() + 1000;
      await until('a rule evaluation after the scrape', async () =>
        (await prometheus.rules()).every((r) => Date.parse(r.lastEvaluation) > seen),
      );
      const rules = await prometheus.rules();
      const results = new Map();
      for (const r of rules) results.set(r.name, await prometheus.query(r.query));
      const pages = await Promise.all([receiver, worker].map(async (u) => (await fetch(u)).text()));
      observed = { rules, results, names: metricNames(pages.join('\n')) };
    },
  });
  if (!observed) throw new Error('the demo never reached beforeClose');
  return { summary, ...observed };
}

describe('alert rules and dashboard', () => {
  it('pass promtool check rules and the rules unit tests', async () => {
    expect(await promtool('check', 'rules', alerts)).toContain('SUCCESS: 6 rules found');
    expect(await promtool('test', 'rules', ops('prometheus/alerts.test.yml'))).toContain('SUCCESS');
  }, 60_000);

  it('fire the dead-letter alert when the demo dead-letters its poison events, and only that one; every dashboard query names a scraped metric', async () => {
    const { summary, rules, results, names } = await observeDemo(true);
    expect(summary.deadLettered).toBe(3);
    expect(summary.lost).toBe(0);
    expect(rules.length).toBe(6);
    for (const r of rules) expect(r.health, `${r.name}: ${r.lastError}`).toBe('ok');

    const dead = results.get('OnceflowDeadLetters') ?? [];
    expect(dead.map((s) => [s.metric.job, Number(s.value[1])])).toEqual([['receiver', 3]]);
    expect(rules.find((r) => r.name === 'OnceflowDeadLetters')?.state).toBe('firing');
    for (const r of rules.filter((x) => x.name !== 'OnceflowDeadLetters')) {
      expect(results.get(r.name), r.name).toEqual([]);
      expect(r.state, r.name).toBe('inactive');
    }

    // The broker gauges come from the demo's backlog monitor over the embedded queue.
    expect(names).toContain('onceflow_broker_messages');
    const queries = [
      ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
      ...rules.map((r) => r.query),
    ];
    expect(queries.length).toBeGreaterThan(20);
    for (const q of queries) {
      const named = namesInQuery(q);
      expect(named.length, `a query names an onceflow metric: ${q}`).toBeGreaterThan(0);
      for (const n of named) expect(names, `${n} (in ${q})`).toContain(n);
    }
    // Template variables may select by a name pattern; any name they spell out must exist too.
    const variables = dashboard.templating.list.filter((v) => v.type === 'query');
    expect(variables.length).toBeGreaterThan(0);
    for (const v of variables) {
      for (const n of namesInQuery(JSON.stringify(v.query))) expect(names).toContain(n);
    }
  }, 240_000);

  it('stay silent on a clean run', async () => {
    const { summary, rules, results } = await observeDemo(false);
    expect(summary.deadLettered).toBe(0);
    expect(summary.processed).toBe(80 + 20);
    expect(rules.length).toBe(6);
    for (const r of rules) {
      expect(r.health, `${r.name}: ${r.lastError}`).toBe('ok');
      expect(results.get(r.name), r.name).toEqual([]);
      expect(r.state, r.name).toBe('inactive');
    }
  }, 240_000);
});
