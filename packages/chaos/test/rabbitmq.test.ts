import { expect, it } from 'vitest';
import { startBroker } from '../src/brokers.js';
import { formatSummary } from '../src/checker.js';
import { runOnce } from '../src/run.js';

/**
 * The bounded fault sample on RabbitMQ (a node of the harness's own): one seed, every worker and
 * receiver kill point, a SIGSTOP past the lock and broker restarts at a third and a half of the
 * events accepted. With the same-transaction helper nothing is lost or doubled.
 */
it('RabbitMQ, same-transaction helper: lost 0, doubled 0 under kills, a SIGSTOP and two broker restarts', async () => {
  const events = 80;
  await using broker = await startBroker('rabbitmq');
  const summary = await runOnce({
    stack: 'rabbitmq',
    mode: 'helper',
    seed: 4243,
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
  expect(summary.faults.filter((f) => f.startsWith('broker restarted')).length).toBe(2);
}, 420_000);
