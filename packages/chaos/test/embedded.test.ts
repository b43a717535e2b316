import { expect, it } from 'vitest';
import { startBroker } from '../src/brokers.js';
import { formatSummary } from '../src/checker.js';
import { runOnce } from '../src/run.js';

/**
 * The bounded fault sample on the embedded default: one seed, every worker and receiver kill
 * point and a SIGSTOP past the lock. With the same-transaction helper nothing is lost or doubled.
 */
it('embedded default, same-transaction helper: lost 0, doubled 0 under kills and a SIGSTOP', async () => {
  const events = 80;
  await using broker = await startBroker('embedded');
  const summary = await runOnce({
    stack: 'embedded',
    mode: 'helper',
    seed: 4242,
    events,
    broker,
    log: () => {},
  });
  console.log(formatSummary(summary).join('\n'));
  expect(summary.accepted).toBe(events);
  expect({ lost: summary.lost, doubled: summary.doubled, unexpected: summary.unexpected }).toEqual({
    lost: 0,
    doubled: 0,
    unexpected: 0,
  });
  expect(summary.faults.filter((f) => f.includes('SIGKILL')).length).toBeGreaterThanOrEqual(6);
  expect(summary.faults.some((f) => f.startsWith('SIGSTOP'))).toBe(true);
}, 300_000);
