import { type Transport, hasHealthCheck } from '@onceflow/core';
import { afterAll, describe, it } from 'vitest';
import { createRecorder, defaultRecordDir, jsonCapabilities } from '../matrix.js';
import {
  type ResolvedTimeouts,
  type TransportConformanceOptions,
  resolveTimeouts,
} from '../options.js';
import { createTransportFixture, freshQueueName } from './fixture.js';
import type { ScenarioContext, ScenarioGroup } from './scenario.js';
import { backlogScenarios, hasBacklog } from './scenarios/backlog.js';
import { concurrencyScenarios } from './scenarios/concurrency.js';
import { deadLetterScenarios } from './scenarios/dead-letters.js';
import { delayScenarios } from './scenarios/delays.js';
import { dedupeScenarios } from './scenarios/dedupe.js';
import { deliveryScenarios } from './scenarios/delivery.js';
import { healthCheckScenarios } from './scenarios/health-check.js';
import { lifecycleScenarios } from './scenarios/lifecycle.js';
import { lockSignalScenarios } from './scenarios/lock-signal.js';
import { lockScenarios } from './scenarios/locks.js';
import { receiverInboxScenarios } from './scenarios/receiver-inbox.js';
import { retryScenarios } from './scenarios/retry.js';
import { sizeScenarios } from './scenarios/size.js';
import { tracingScenarios } from './scenarios/tracing.js';

const groups: readonly ScenarioGroup[] = [
  deliveryScenarios,
  dedupeScenarios,
  lockScenarios,
  lockSignalScenarios,
  retryScenarios,
  delayScenarios,
  deadLetterScenarios,
  concurrencyScenarios,
  lifecycleScenarios,
  sizeScenarios,
  tracingScenarios,
  receiverInboxScenarios,
];

/**
 * A transport made by `createTransport` (closed again), its capabilities checked against the
 * `lockMs` asked for, and the optional scenario groups of the abilities it implements.
 */
async function readProbe(
  options: TransportConformanceOptions,
  t: ResolvedTimeouts,
): Promise<{ probe: Transport; optional: readonly ScenarioGroup[] }> {
  const probe = await options.createTransport({ queue: freshQueueName(), lockMs: t.lockMs });
  const caps = probe.capabilities;
  const optional: readonly ScenarioGroup[] = [
    ...(hasBacklog(probe) ? [backlogScenarios] : []),
    ...(hasHealthCheck(probe) ? [healthCheckScenarios] : []),
  ];
  await probe.close();
  if (caps.lock.ms !== t.lockMs) {
    throw new RangeError(
      `createTransport({ lockMs: ${t.lockMs} }) made a transport whose capabilities.lock.ms is ${caps.lock.ms}: pass lockMs to its config`,
    );
  }
  return { probe, optional };
}

/**
 * Registers the transport conformance suite with vitest: one test per scenario, each on its own
 * fresh queue. Capabilities are read from a transport made by `createTransport` (transports are
 * never started by the suite, except in the TopologySetup scenario); every declared capability is tested, and for each one not declared, its fallback.
 * A transport with `BacklogProbe` also runs the backlog scenarios, one with `HealthCheck` the
 * health-check scenario.
 * When the suite ends, what it observed is written to the capability record (see `recordTo`).
 *
 * @example
 * const broker = createMemoryBroker();
 * describeTransportConformance('memory', {
 *   createTransport: async ({ queue, lockMs }) => createMemoryTransport({ broker, queue, lockMs }),
 * });
 */
export function describeTransportConformance(
  label: string,
  options: TransportConformanceOptions,
): void {
  const t = resolveTimeouts(options.timeouts);
  describe(`transport conformance: ${label}`, async () => {
    let probe: Transport;
    let optional: readonly ScenarioGroup[];
    try {
      ({ probe, optional } = await readProbe(options, t));
    } catch (error) {
      // A failing test, not a failed collection: the run reports it like any broken promise.
      it('createTransport makes a transport that declares the lockMs it was given', () => {
        throw error;
      });
      return;
    }
    const caps = probe.capabilities;
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
      fixture: (o) => createTransportFixture(options, o),
    };
    for (const scenario of [...groups, ...optional].flatMap((group) => group(caps, t))) {
      const record = recorder.add(scenario.name, scenario.proves);
      it(scenario.name, () => recorder.track(record, () => scenario.run(ctx)), t.testMs);
    }
    afterAll(() => recorder.write());
  });
}
