import type { Inbox, RecordStore } from '@onceflow/core';
import { afterAll, describe, it } from 'vitest';
import { claimScenarios } from './scenarios/claims.js';
import { createRecorder, defaultRecordDir } from '../matrix.js';
import { type ConformanceStore, storeScenarioContext } from './scenario.js';
import { actionScenarios } from './scenarios/actions.js';
import { deadLetterScenarios } from './scenarios/dead-letters.js';
import { historyScenarios } from './scenarios/history.js';
import { inboxOutcomeScenarios, noInboxOutcomeScenarios } from './scenarios/inbox-outcomes.js';
import { leaseScenarios } from './scenarios/leases.js';
import { lifecycleScenarios } from './scenarios/lifecycle.js';
import { listingScenarios } from './scenarios/listing.js';
import { noteScenarios } from './scenarios/notes.js';
import { retentionScenarios } from './scenarios/retention.js';
import { claimOrderScenarios } from './scenarios/claim-order.js';
import { historyNoteScenarios } from './scenarios/history-notes.js';
import { listOrderScenarios } from './scenarios/list-order.js';
import { purgeCutoffScenarios } from './scenarios/purge-cutoff.js';
import { refusalScenarios } from './scenarios/refusals.js';
import { unclaimedStatsScenarios } from './scenarios/unclaimed-stats.js';
import { workerFirstScenarios } from './scenarios/worker-first.js';

export interface StoreConformanceOptions<S extends Inbox & RecordStore = Inbox & RecordStore> {
  /** Makes a store for one scenario (fresh, or shared: scenarios use their own source names). */
  readonly createStore: () => Promise<S>;
  /** Called after each scenario with the store it used. */
  readonly close?: ((store: S) => Promise<void>) | undefined;
  /** Lease used where a lease must run out, in ms. Default 200. */
  readonly shortLeaseMs?: number | undefined;
  /** Longest wait for a lease to run out, in ms. Default 5000. */
  readonly deadlineMs?: number | undefined;
  /** Timeout of each scenario, in ms. Default 30000. */
  readonly testMs?: number | undefined;
  /**
   * Whether the store implements `InboxOutcomes` (`markProcessed`), so a worker whose `records`
   * are another store can tell it an event is finished. Default true: its scenarios must pass.
   * `false`: the suite checks instead that a worker refuses the store as its `inbox`.
   */
  readonly inboxOutcomes?: boolean | undefined;
  /** Directory for the capability record (`store-<label>.json`), or `false` for none. */
  readonly recordTo?: string | false | undefined;
}

interface Scenario {
  readonly name: string;
  run(store: ConformanceStore, times: { shortLeaseMs: number; deadlineMs: number }): Promise<void>;
}

/** The inbox suite's claim scenarios, run as they are, then the record scenarios. */
function scenarios(inboxOutcomes: boolean): Scenario[] {
  const claims = claimScenarios.map(
    (s): Scenario => ({
      name: s.name,
      run: (store, times) => s.run(storeScenarioContext(store, times)),
    }),
  );
  const records = [
    ...lifecycleScenarios,
    ...leaseScenarios,
    ...deadLetterScenarios,
    ...actionScenarios,
    ...historyScenarios,
    ...noteScenarios,
    ...listingScenarios,
    ...retentionScenarios,
    ...(inboxOutcomes ? inboxOutcomeScenarios : noInboxOutcomeScenarios),
    ...workerFirstScenarios,
    ...claimOrderScenarios,
    ...historyNoteScenarios,
    ...listOrderScenarios,
    ...purgeCutoffScenarios,
    ...refusalScenarios,
    ...unclaimedStatsScenarios,
  ].map(
    (s): Scenario => ({
      name: s.name,
      run: (store, times) => s.run(storeScenarioContext(store, times)),
    }),
  );
  return [...claims, ...records];
}

/**
 * Registers the store conformance suite with vitest, for a store that keeps the receiver's claim
 * and the event record on one row (`Inbox & RecordStore`): claims and stale claims, the record's
 * state machine, the processing lease under concurrent workers, dead letters, operator actions,
 * bounded history, filters and cursor paging, retention and stats, and `InboxOutcomes` (the
 * receiver's inbox told by a worker whose record is another store). Each scenario uses its own
 * source name; `createStore` is called per scenario and `close` after it.
 *
 * @example
 * describeStoreConformance('memory', { createStore: async () => createMemoryStore() });
 */
export function describeStoreConformance<S extends Inbox & RecordStore>(
  label: string,
  options: StoreConformanceOptions<S>,
): void {
  const times = {
    shortLeaseMs: options.shortLeaseMs ?? 200,
    deadlineMs: options.deadlineMs ?? 5000,
  };
  const testMs = options.testMs ?? 30_000;
  describe(`store conformance: ${label}`, () => {
    const recorder = createRecorder({
      kind: 'store',
      label,
      name: label,
      dir: options.recordTo ?? defaultRecordDir(),
    });
    for (const scenario of scenarios(options.inboxOutcomes ?? true)) {
      const record = recorder.add(scenario.name, []);
      it(
        scenario.name,
        () =>
          recorder.track(record, async () => {
            const store = await options.createStore();
            try {
              await scenario.run(store, times);
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
