import { createProbes } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createBullmqTransport } from '../src/index.js';
import { runPrefix } from './helpers.js';

describe('check (readiness)', () => {
  it('fails readiness within its time limit while Redis is unreachable', async () => {
    // Port 1 on loopback: nothing listens.
    const transport = createBullmqTransport({
      url: 'redis://127.0.0.1:1',
      queue: 'unreachable',
      prefix: runPrefix(),
    });
    const report = await createProbes({ transport, timeoutMs: 1_500 }).ready.run();
    expect(report.checks.transport?.status).toBe('fail');
    expect(report.status).toBe('fail');
    await transport.close();
  }, 30_000);
});
