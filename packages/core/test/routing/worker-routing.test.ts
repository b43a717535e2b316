import { describe, expect, it } from 'vitest';
import { createEnvelope } from '../../src/envelope.js';
import { ConfigError } from '../../src/errors.js';
import { createWorker, defineHandler } from '../../src/worker/index.js';
import { fixture } from '../worker/fixture.js';

const envelope = (source: string, type: string) =>
  createEnvelope({ id: `${source}-${type}-${Math.random()}`, source, type, payload: {} });

describe('worker routing', () => {
  it('sends each event to the most specific handler by source and type', async () => {
    await using f = fixture({ queue: 'routing' });
    const seen: string[] = [];
    const handler = (type: string) =>
      defineHandler({
        type,
        async handle(_e, ctx) {
          seen.push(`${type} <- ${ctx.envelope.source}/${ctx.envelope.type}`);
        },
      });
    await f.worker({
      handlers: [
        handler('stripe:invoice.*'),
        handler('*:payment.*'),
        handler('stripe:invoice.paid'),
        handler('github:push'),
      ],
    });
    await f.publish(
      envelope('stripe', 'invoice.paid'),
      envelope('stripe', 'invoice.voided'),
      envelope('shop', 'payment.captured'),
      envelope('github', 'push'),
    );
    const unknown = envelope('shop', 'invoice.paid');
    await f.publish(unknown);
    await f.drained();
    expect(seen.sort()).toEqual([
      '*:payment.* <- shop/payment.captured',
      'github:push <- github/push',
      'stripe:invoice.* <- stripe/invoice.voided',
      'stripe:invoice.paid <- stripe/invoice.paid',
    ]);
    const letter = await f.recordIn(unknown.id, 'dead-lettered', { source: 'shop' });
    expect(letter.reason).toBe('no handler for type "invoice.paid"');
  });

  it('refuses equally specific overlapping patterns at createWorker', async () => {
    await using f = fixture({ queue: 'routing-tie' });
    const h = (type: string) => defineHandler({ type, async handle() {} });
    const base = { transport: f.transport, records: f.store };
    expect(() => createWorker({ ...base, handlers: [h('invoice.*'), h('*.paid')] })).toThrow(
      ConfigError,
    );
    expect(() => createWorker({ ...base, handlers: [h('stripe:x'), h('stripe:x')] })).toThrow(
      /equally specific/,
    );
  });
});
