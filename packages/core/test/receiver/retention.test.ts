import { describe, expect, it, vi } from 'vitest';
import { createEnvelope } from '../../src/envelope.js';
import { purgeInPacedBatches } from '../../src/kit.js';
import { ConfigError } from '../../src/errors.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import {
  assertRetentionCovers,
  createReceiver,
  createRetentionJanitor,
  DEFAULT_INBOX_RETENTION_MS,
} from '../../src/receiver/index.js';
import { msgraph } from '../../src/verify/msgraph.js';
import { stripe } from '../../src/verify/stripe.js';
import { until } from './helpers.js';

const DAY = 86_400_000;
const sources = {
  graph: msgraph({ clientStates: ['cs'] }),
  payments: stripe({ secrets: ['whsec_x'] }),
};

describe('retention check', () => {
  it('refuses a retention shorter than a sender retry horizon, naming the source', () => {
    const check = () => assertRetentionCovers({ retentionMs: 2 * DAY, sources });
    expect(check).toThrow(ConfigError);
    expect(check).toThrow(/source "payments" \(stripe\).*3 d/);
  });

  it('accepts the 4-day default for every built-in sender it is given', () => {
    expect(DEFAULT_INBOX_RETENTION_MS).toBe(4 * DAY);
    expect(() =>
      assertRetentionCovers({ retentionMs: DEFAULT_INBOX_RETENTION_MS, sources }),
    ).not.toThrow();
  });

  it('makes createReceiver refuse to start with a short inboxRetentionMs', () => {
    const config = { sources, inbox: createMemoryStore(), transport: createMemoryTransport() };
    expect(() => createReceiver({ ...config, inboxRetentionMs: DAY })).toThrow(/"payments"/);
    expect(() => createReceiver(config)).not.toThrow();
  });

  it('rejects an invalid config in one ConfigError', () => {
    expect(() =>
      createReceiver({
        sources: {},
        inbox: createMemoryStore(),
        transport: createMemoryTransport(),
        maxBodyBytes: -1,
        keepHeaders: ['Stripe-Signature'],
      }),
    ).toThrow(/sources[\s\S]*maxBodyBytes[\s\S]*keepHeaders/);
  });
});

describe('retention janitor', () => {
  it('purges rows older than the retention, keeps newer and pending ones', async () => {
    let now = Date.parse('2030-01-10T00:00:00Z');
    const inbox = createMemoryStore({ now: () => now });
    const purge = vi.spyOn(inbox, 'purge');
    const claim = async (id: string, receivedAt: number, enqueue: boolean) => {
      const env = createEnvelope({
        id,
        source: 's',
        type: 't',
        payload: id,
        receivedAt: new Date(receivedAt),
      });
      const c = await inbox.claim(env, { leaseMs: 1000 });
      if (enqueue && c.status === 'new') await inbox.markEnqueued('s', id, c.token);
    };
    await claim('old', now - 5 * DAY, true);
    await claim('recent', now - DAY, true);
    await claim('old-pending', now - 5 * DAY, false);
    now += 10;

    const janitor = createRetentionJanitor({ inbox, intervalMs: 60_000, now: () => new Date(now) });
    expect(await janitor.runOnce()).toBe(1);
    expect(purge).toHaveBeenCalledWith({
      olderThan: new Date(now - DEFAULT_INBOX_RETENTION_MS),
      signal: expect.any(AbortSignal),
    });
    expect(await inbox.stats()).toMatchObject({ enqueued: 1, pending: 1 });
    await janitor.close();
  });

  it('runs on start, then on its interval, and stops on close', async () => {
    const inbox = createMemoryStore();
    const purge = vi.spyOn(inbox, 'purge');
    await using janitor = createRetentionJanitor({ inbox, retentionMs: DAY, intervalMs: 20 });
    janitor.start();
    janitor.start(); // idempotent
    await until(() => purge.mock.calls.length >= 3);
    await janitor.close();
    const calls = purge.mock.calls.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(purge.mock.calls.length).toBe(calls);
  });

  it('close aborts a purge in progress, which stops between batches, and returns promptly', async () => {
    let batches = 0;
    // A purge that would never end: every batch comes back full, and each is paced.
    const inbox = {
      purge: ({ signal }: { signal?: AbortSignal | undefined }) =>
        purgeInPacedBatches(
          async () => {
            batches++;
            await new Promise((r) => setTimeout(r, 5));
            return 100;
          },
          { batchSize: 100, pauseRatio: 4, signal },
        ),
    };
    const janitor = createRetentionJanitor({ inbox, intervalMs: 60_000 });
    const run = janitor.runOnce();
    await until(() => batches >= 2);
    const t0 = performance.now();
    await janitor.close();
    // Promptly, not never (the purge has no end of its own): close waits for the batch in flight,
    // a 5 ms timer, which a starved process on a loaded machine may run half a second late.
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(await run).toBe(batches * 100);
    const after = batches;
    await new Promise((r) => setTimeout(r, 50));
    expect(batches, 'no batch after close').toBe(after);
    const again = janitor.runOnce(); // a run after close gets a signal of its own
    await until(() => batches > after);
    await janitor.close();
    expect(await again).toBeGreaterThan(0);
  });
});
