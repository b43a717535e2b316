import type { Inbox, ProcessedStore } from '@onceflow/core';
import { afterAll, describe, it } from 'vitest';
import { createRecorder, defaultRecordDir } from '../matrix.js';
import type { InboxConformanceOptions } from '../options.js';
import { scenarioContext } from './scenario.js';
import { claimScenarios } from './scenarios/claims.js';
import { processedScenarios } from './scenarios/processed.js';
import { retentionScenarios } from './scenarios/retention.js';

/**
 * Registers the inbox-store conformance suite with vitest: `Inbox` claims, leases, stale claims
 * and retention, and the `ProcessedStore` guard, on one store implementing both. Each scenario
 * uses its own source name; `createStore` is called per scenario and `close` after it.
 *
 * @example
 * describeInboxConformance('memory', { createStore: async () => createMemoryInbox() });
 */
export function describeInboxConformance<S extends Inbox & ProcessedStore>(
  label: string,
  options: InboxConformanceOptions<S>,
): void {
  const shortLeaseMs = options.shortLeaseMs ?? 200;
  const deadlineMs = options.deadlineMs ?? 5000;
  const testMs = options.testMs ?? 30_000;
  describe(`inbox conformance: ${label}`, () => {
    const recorder = createRecorder({
      kind: 'inbox',
      label,
      name: label,
      dir: options.recordTo ?? defaultRecordDir(),
    });
    for (const scenario of [...claimScenarios, ...processedScenarios, ...retentionScenarios]) {
      const record = recorder.add(scenario.name, []);
      it(
        scenario.name,
        () =>
          recorder.track(record, async () => {
            const store = await options.createStore();
            try {
              await scenario.run(scenarioContext(store, { shortLeaseMs, deadlineMs }));
            } finally {
              await options.close?.(store);
            }
          }),
        testMs,
      );
    }
    afterAll(() => recorder.write());
  });
}
