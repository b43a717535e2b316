import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics, createMetricsHandler } from '../../src/index.js';

describe('metrics handler', () => {
  it('serves the registry over node:http with the Prometheus content type, GET and HEAD only', async () => {
    const metrics = createMetrics();
    metrics.processed.inc({ type: 'order.paid' });
    const serve = createMetricsHandler(metrics);
    const server = createServer((req, res) => void serve.node(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    try {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(metrics.registry.contentType);
      expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
      expect(await res.text()).toContain('onceflow_processed_total{type="order.paid"} 1');
      const head = await fetch(url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      const post = await fetch(url, { method: 'POST', body: 'x' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('answers Fetch API requests, and 500 when a collect callback throws', async () => {
    const registry = new Registry();
    new Gauge({ name: 'own_gauge', help: 'a gauge of your own', registers: [registry] }).set(3);
    const ok = createMetricsHandler({ registry });
    const res = await ok.fetch(new Request('http://localhost/metrics'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(registry.contentType);
    expect(await res.text()).toContain('own_gauge 3');

    new Gauge({
      name: 'broken_gauge',
      help: 'its collect throws',
      registers: [registry],
      collect() {
        throw new Error('store is down');
      },
    });
    const failed = await ok.fetch(new Request('http://localhost/metrics'));
    expect(failed.status).toBe(500);
    expect(await failed.text()).toContain('store is down');
  });
});
