import { randomBytes } from 'node:crypto';
import { createRedisInbox } from '@onceflow/inbox-redis';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { captureOutput, deadLetter, event } from './helpers.js';
import { describeRecordCommands } from './record-commands.js';

// The shared Redis; a key prefix of this run's own, its keys deleted afterwards.
const url = process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `onceflow-cli-${randomBytes(4).toString('hex')}`;
const redis = new Redis(url);
const store = createRedisInbox({ redis, prefix });

describeRecordCommands({
  store: 'redis',
  flags: [],
  env: { ONCEFLOW_REDIS_URL: url, ONCEFLOW_REDIS_PREFIX: prefix },
  records: store,
  cleanup: async () => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${store.keyBase}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  },
});

describe('--store redis, besides the record', () => {
  const run = async (env: Record<string, string>, ...argv: string[]) => {
    const io = captureOutput();
    const code = await runCli(['--store', 'redis', ...argv], { output: io.output, env });
    return { code, ...io };
  };
  const env = { ONCEFLOW_REDIS_URL: url, ONCEFLOW_REDIS_PREFIX: prefix };

  it('inbox stats counts the claims; replay is refused (no stored envelopes)', async () => {
    const claim = await store.claim(event('evt_claimed', { source: 'inbox' }), { leaseMs: 60_000 });
    expect(claim.status).toBe('new');
    const stats = await run(env, 'inbox', 'stats', '--json');
    expect(stats.code).toBe(0);
    expect(stats.json()).toMatchObject({ pending: 1 });
    const replay = await run(env, 'replay', '--since', '2025-01-01');
    expect(replay.code).toBe(2);
    expect(replay.errText()).toContain('store "redis" has no inbox that can list stored events');
  });

  it('replay by id reads the record, and refuses one whose envelope Redis no longer keeps', async () => {
    const done = event('evt_done', { source: 'replay-id' });
    const claim = await store.claim(done, { leaseMs: 60_000 });
    if (claim.status !== 'new') throw new Error(claim.status);
    await store.markEnqueued(done.source, done.id, claim.token);
    const begun = await store.begin(done, { leaseMs: 60_000, attempt: 1 });
    if (begun.status !== 'acquired') throw new Error(begun.status);
    await store.complete(done.source, done.id, begun.token);
    await deadLetter(store, [event('evt_dead', { source: 'replay-id' })]);
    const { code, out, errText } = await run(
      env,
      'replay',
      'replay-id/evt_done',
      'replay-id/evt_dead',
      '--to',
      'embedded',
    );
    expect(code).toBe(3);
    expect(out).toEqual([]);
    expect(errText()).toBe(
      'Not replayable: replay-id/evt_done (no stored envelope), replay-id/evt_dead (dead-lettered: redrive it instead). Nothing was published.',
    );
  });

  it('fails with 1 when Redis cannot be reached', async () => {
    const { code, errText } = await run(
      { ONCEFLOW_REDIS_URL: 'redis://127.0.0.1:1' },
      'dead-letters',
      'list',
    );
    expect(code).toBe(1);
    expect(errText()).toContain(
      'no Redis at redis://127.0.0.1:1 (set ONCEFLOW_REDIS_URL, or redis.url in the config file)',
    );
  });
});
