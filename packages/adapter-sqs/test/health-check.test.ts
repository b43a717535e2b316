import { SQSClient } from '@aws-sdk/client-sqs';
import { createProbes } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createSqsTransport } from '../src/index.js';
import { uniqueQueue } from './sqs.js';

describe('check (readiness)', () => {
  it('fails readiness within its time limit while SQS is unreachable', async () => {
    // Port 1 on loopback: nothing listens.
    const client = new SQSClient({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      credentials: { accessKeyId: 'onceflow', secretAccessKey: 'onceflow' },
      maxAttempts: 1,
    });
    const transport = createSqsTransport({ client, queue: uniqueQueue('unreachable') });
    const report = await createProbes({ transport, timeoutMs: 1_500 }).ready.run();
    expect(report.checks.transport?.status).toBe('fail');
    expect(report.status).toBe('fail');
    await transport.close();
    client.destroy();
  }, 30_000);
});
