import { type HealthCheck, hasHealthCheck, type Transport } from '@onceflow/core';
import { expect } from 'vitest';
import type { ScenarioGroup, TransportScenario } from '../scenario.js';

const checkOf = (t: Transport): HealthCheck => {
  if (!hasHealthCheck(t)) throw new TypeError(`the ${t.name} transport has no check()`);
  return t;
};

const answersWhileOpen: TransportScenario = {
  name: 'check() answers while the broker is reachable, before any other call, and rejects once the transport is closed',
  proves: [],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const health = checkOf(fx.transport);
    await health.check(AbortSignal.timeout(t.deliveryMs));
    await health.check(AbortSignal.timeout(t.deliveryMs)); // again: nothing was used up
    await fx.transport.close();
    await expect(health.check(AbortSignal.timeout(t.deliveryMs))).rejects.toThrow();
  },
};

/** Scenarios for a transport with the optional `HealthCheck` (readiness probes use it). */
export const healthCheckScenarios: ScenarioGroup = () => [answersWhileOpen];
