import { afterAll, describe, it } from 'vitest';
import { createRecorder, defaultRecordDir, jsonCapabilities } from '../matrix.js';
import { type TransportConformanceOptions, resolveTimeouts } from '../options.js';
import { createTransportFixture, freshQueueName } from './fixture.js';
import type { ScenarioContext, ScenarioGroup } from './scenario.js';
import { concurrencyScenarios } from './scenarios/concurrency.js';
import { deadLetterScenarios } from './scenarios/dead-letters.js';
import { dedupeScenarios } from './scenarios/dedupe.js';
import { deliveryScenarios } from './scenarios/delivery.js';
import { lifecycleScenarios } from './scenarios/lifecycle.js';
import { lockScenarios } from './scenarios/locks.js';
import { retryScenarios } from './scenarios/retry.js';
import { sizeScenarios } from './scenarios/size.js';

const groups: readonly ScenarioGroup[] = [
  deliveryScenarios,
  dedupeScenarios,
  lockScenarios,
  retryScenarios,
  deadLetterScenarios,
  concurrencyScenarios,
  lifecycleScenarios,
  sizeScenarios,
];

/**
 * Registers the transport conformance suite with vitest: one test per scenario, each on its own
 * fresh queue. Capabilities are read from a transport made by `createTransport` (it is not
 * started); every declared capability is tested, and for each one not declared, its fallback.
 * When the suite ends, what it observed is written to the capability record (see `recordTo`).
 *
 * @example
 * const broker = createMemoryBroker();
 * describeTransportConformance('memory', {
 *   createTransport: async ({ queue }) => createMemoryTransport({ broker, queue }),
 * });
 */
export function describeTransportConformance(
  label: string,
  options: TransportConformanceOptions,
): void {
  const t = resolveTimeouts(options.timeouts);
  describe(`transport conformance: ${label}`, async () => {
    const probe = await options.createTransport({ queue: freshQueueName() });
    const caps = probe.capabilities;
    await probe.close();
    if (t.lockMs > caps.lock.maxMs) {
      throw new RangeError(
        `timeouts.lockMs ${t.lockMs} exceeds capabilities.lock.maxMs ${caps.lock.maxMs}`,
      );
    }
    const recorder = createRecorder({
      kind: 'transport',
      label,
      name: probe.name,
      capabilities: jsonCapabilities(caps),
      dir: options.recordTo ?? defaultRecordDir(),
    });
    const ctx: ScenarioContext = {
      caps,
      t,
      longLockMs: Math.min(caps.lock.maxMs, 60_000),
      fixture: () => createTransportFixture(options),
    };
    for (const scenario of groups.flatMap((group) => group(caps, t))) {
      const record = recorder.add(scenario.name, scenario.proves);
      it(scenario.name, () => recorder.track(record, () => scenario.run(ctx)), t.testMs);
    }
    afterAll(() => recorder.write());
  });
}
