import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/index.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { lines, destination };
}

describe('logger', () => {
  it('redacts secrets, signature headers, clientState and configured payload fields', () => {
    const { lines, destination } = capture();
    const log = createLogger({ level: 'info', redactPaths: ['payload.email'], destination });
    log.info(
      {
        secrets: ['whsec_abc'],
        headers: {
          'stripe-signature': 't=1,v1=deadbeef',
          'x-hub-signature-256': 'sha256=beef',
          'webhook-signature': 'v1,abc',
          authorization: 'Bearer x',
          'content-type': 'application/json',
        },
        clientState: 'graph-secret',
        payload: { email: 'a@example.com', amount: 42 },
      },
      'webhook',
    );
    const line = JSON.stringify(lines[0]);
    for (const secret of [
      'whsec_abc',
      'deadbeef',
      'sha256=beef',
      'v1,abc',
      'Bearer x',
      'graph-secret',
      'a@example.com',
    ]) {
      expect(line).not.toContain(secret);
    }
    expect(line).toContain('application/json');
    expect(line).toContain('42');
  });
});
