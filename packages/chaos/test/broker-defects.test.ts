import { readFileSync } from 'node:fs';
import type { RecordStore } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { defectsSince, elasticMqDefects } from '../src/broker-defects.js';
import { check } from '../src/checker.js';

// ElasticMQ 1.7.1's own log from a sweep run (sqs/plain seed 32676): its persistence actor failed
// at 17:14:08.614, acknowledged sends without writing them from then on, and the broker's next
// SIGKILL took the 423 events accepted after that with it.
const log = readFileSync(
  new URL('./fixtures/elasticmq-persistence-actor-failed.log', import.meta.url),
  'utf8',
);
const day = Date.UTC(2026, 11, 2);
const at = (h: number, m: number, s: number, ms = 0) => day + ((h * 60 + m) * 60 + s) * 1000 + ms;

describe("ElasticMQ's persistence actor failing mid-run (sweep, sqs seed 32676)", () => {
  it('is read from the broker log as one defect at its time, the ask time-outs after it are not', () => {
    const defects = elasticMqDefects(log, at(17, 20, 0));
    expect(defects).toHaveLength(1);
    expect(defects[0]?.at).toBe(at(17, 14, 8, 614));
    expect(defects[0]?.what).toContain('requirement failed');
    expect(
      elasticMqDefects(log.replaceAll('SqlQueuePersistenceActor', 'Other'), at(17, 20, 0)),
    ).toEqual([]);
  });

  it('a time of day later than now is yesterday', () => {
    expect(elasticMqDefects(log, at(0, 5, 0) + 86_400_000)[0]?.at).toBe(at(17, 14, 8, 614));
    expect(elasticMqDefects(log, at(17, 0, 0))[0]?.at).toBe(at(17, 14, 8, 614) - 86_400_000);
  });

  it('each run sees only what was logged since the previous call', () => {
    let text = 'old\n';
    const next = defectsSince(() => text, elasticMqDefects);
    expect(next()).toEqual([]);
    text += log;
    expect(next()).toHaveLength(1);
    expect(next()).toEqual([]);
  });

  it('the checker counts events accepted after it as lost with the broker, those before as lost', async () => {
    const records = { get: async () => undefined } as unknown as RecordStore;
    const input = (accepted: [string, number][]) => ({
      stack: 'sqs',
      mode: 'helper' as const,
      seed: 32676,
      events: accepted.length + 1,
      requests: 3,
      accepted: new Map([['kept', at(17, 10, 0)], ...accepted]),
      gaveUp: new Map(),
      forgedAccepted: 0,
      rows: [{ id: 'kept', rows: 1, firstAt: at(17, 10, 1) }],
      records,
      faults: [],
      statuses: new Map(),
      brokerDefects: elasticMqDefects(log, at(17, 20, 0)),
      durationMs: 1,
    });
    const after = await check(input([['after', at(17, 14, 28, 550)]]));
    expect(after).toMatchObject({ lost: 0, brokerLost: 1, failed: false });
    expect(after.brokerDefects[0]).toContain('17:14:08.614');
    const before = await check(
      input([
        ['before', at(17, 14, 8, 600)],
        ['after', at(17, 14, 28, 550)],
      ]),
    );
    expect(before).toMatchObject({ lost: 1, brokerLost: 1, failed: true });
    const noDefect = await check({ ...input([['after', at(17, 14, 28, 550)]]), brokerDefects: [] });
    expect(noDefect).toMatchObject({ lost: 1, brokerLost: 0, failed: true });
  });
});
