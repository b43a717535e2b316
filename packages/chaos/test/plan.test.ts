import { expect, it } from 'vitest';
import { describePlan, planFor } from '../src/plan.js';
import { mulberry32 } from '../src/prng.js';

it('a fault plan is reproduced from its seed alone', () => {
  expect(planFor(1000, 300, true)).toEqual(planFor(1000, 300, true));
  expect(describePlan(planFor(1000, 300, true))).not.toEqual(
    describePlan(planFor(8919, 300, true)),
  );
  const a = mulberry32(7);
  const b = mulberry32(7);
  expect(Array.from({ length: 5 }, () => a.next())).toEqual(
    Array.from({ length: 5 }, () => b.next()),
  );
});

it('every plan has each worker and receiver kill point once, within the run', () => {
  const plan = planFor(42, 200, false);
  expect(plan.workers.map((k) => k.point).sort()).toEqual([
    'after-ack',
    'after-effect',
    'before-handler',
  ]);
  expect(plan.receivers.map((k) => k.point).sort()).toEqual([
    'after-claim',
    'after-publish',
    'after-verify',
  ]);
  for (const k of [...plan.workers, ...plan.receivers])
    expect(k.after).toBeLessThanOrEqual(200 / 10);
  expect(plan.brokerRestarts).toEqual([]);
});

it('a PostgreSQL restart is drawn after the other faults: the rest of the plan is the same', () => {
  const { postgresRestart, ...rest } = planFor(1000, 300, true, true);
  expect(rest).toEqual(planFor(1000, 300, true));
  expect(planFor(1000, 300, true).postgresRestart).toBeUndefined();
  expect(postgresRestart).toEqual(planFor(1000, 300, true, true).postgresRestart);
  expect(['fast', 'immediate', 'kill']).toContain(postgresRestart?.mode);
  expect(postgresRestart?.at).toBeGreaterThanOrEqual(0.2);
  expect(postgresRestart?.at).toBeLessThan(0.8);
});
