/**
 * A simulated week of retries: 1 000 events, half of whose handlers fail until their 18th attempt, backing
 * off from 1 minute doubling to a ceiling of a day (no jitter, so the week is exact), with a
 * 4-day retention pass every simulated hour. Prints the wall time; the target is under a
 * second. Run: pnpm --filter @onceflow/testing bench
 */
import { defineHandler } from '@onceflow/core';

// tsx turns on source maps: every failure's stack trace (the worker reads it for the event
// record's last error) would then be mapped back to the TypeScript, which costs more than the rest
// of the delivery. Built code run with plain node does not pay it; neither does this bench.
process.setSourceMapsEnabled(false);
import { runSimulation, type SimEvent } from '../src/index.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const EVENTS = 1_000;
const SUCCEEDS_ON = 18;

const events: SimEvent[] = Array.from({ length: EVENTS }, (_, i) => ({
  id: `evt_${i + 1}`,
  type: 'payment',
  key: `acct_${i % 50}`,
  payload: { amount: i + 1 },
}));
// Odd events fail until their 18th attempt, a week of backoff; even ones succeed at once, so
// retention has completed records older than 4 days to purge while the odd ones still retry.
const flaky = defineHandler({
  type: 'payment',
  handle: async (event, ctx) => {
    const { amount } = event as { amount: number };
    if (amount % 2 === 1 && ctx.attempt < SUCCEEDS_ON) throw new Error('downstream is down');
  },
});

const started = performance.now();
const cpu = process.cpuUsage();
const result = await runSimulation({
  handlers: [flaky],
  events,
  spacingMs: (3 * DAY) / EVENTS, // arrivals over the first 3 days
  retry: { maxAttempts: 20, baseDelayMs: MINUTE, maxDelayMs: DAY, jitter: 'none' },
  retention: { keepMs: 4 * DAY, everyMs: HOUR },
  maxDeliveries: EVENTS * 20,
});
const wallMs = performance.now() - started;
const { user, system } = process.cpuUsage(cpu);
const cpuMs = (user + system) / 1000;

const completed = [...result.states.values()].filter((s) => s !== undefined).length;
const purged = result.timeline.filter((s) => s.text.startsWith('retention')).length;
console.log(
  [
    `simulated ${(result.elapsedMs / DAY).toFixed(2)} days: ${result.deliveries} deliveries of ${EVENTS} events`,
    `  settled: ${result.settled}; records still kept: ${completed}; retention passes that purged: ${purged}`,
    `  wall time: ${wallMs.toFixed(0)} ms (${((wallMs * 1000) / result.deliveries).toFixed(1)} µs per delivery); CPU ${cpuMs.toFixed(0)} ms`,
  ].join('\n'),
);
