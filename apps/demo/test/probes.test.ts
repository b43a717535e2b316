import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/run.js';

interface Report {
  status: string;
  checks: Record<string, { status: string; durationMs: number }>;
}

const probe = async (url: string): Promise<{ status: number; report: Report }> => {
  const res = await fetch(url);
  return { status: res.status, report: (await res.json()) as Report };
};

// The demo's receiver and worker processes serve /healthz and /readyz beside /metrics.
describe('demo probes', () => {
  it('the receiver and the worker are live and ready while the demo runs', async () => {
    const seen: Record<string, { status: number; report: Report }> = {};
    const summary = await runDemo({
      broker: 'embedded',
      events: 20,
      kill: false,
      log: () => {},
      beforeClose: async (metricsUrls) => {
        const [receiver = '', worker = ''] = metricsUrls.map((u) => u.replace(/\/metrics$/, ''));
        for (const [name, base] of [
          ['receiver', receiver],
          ['worker', worker],
        ] as const) {
          seen[`${name} live`] = await probe(`${base}/healthz`);
          seen[`${name} ready`] = await probe(`${base}/readyz`);
        }
      },
    });
    expect(summary.lost).toBe(0);
    for (const [what, { status, report }] of Object.entries(seen)) {
      expect(status, what).toBe(200);
      expect(report.status, what).toBe('pass');
    }
    expect(Object.keys(seen['receiver ready']?.report.checks ?? {}).sort()).toEqual([
      'receiver',
      'store',
      'transport',
    ]);
    expect(Object.keys(seen['worker ready']?.report.checks ?? {}).sort()).toEqual([
      'store',
      'transport',
      'worker',
    ]);
    expect(Object.keys(seen['worker live']?.report.checks ?? {}).sort()).toEqual([
      'event-loop',
      'worker',
    ]);
  }, 180_000);
});
