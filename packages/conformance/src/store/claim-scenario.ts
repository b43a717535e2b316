import { randomUUID } from 'node:crypto';
import type { Envelope, EnvelopeInit, Inbox, RecordStore } from '@onceflow/core';
import { testEnvelope } from '../envelopes.js';

export interface InboxScenarioContext {
  readonly store: Inbox & RecordStore;
  /** A source name unique to this scenario, so scenarios never touch each other's rows. */
  readonly source: string;
  /** A lease that runs out during the scenario. */
  readonly shortLeaseMs: number;
  /** A lease that never runs out during the scenario. */
  readonly longLeaseMs: number;
  readonly deadlineMs: number;
  /** An envelope of this scenario's source. */
  envelope(init?: Partial<EnvelopeInit>): Envelope;
}

export interface InboxScenario {
  readonly name: string;
  run(ctx: InboxScenarioContext): Promise<void>;
}

export function scenarioContext(
  store: Inbox & RecordStore,
  o: { shortLeaseMs: number; deadlineMs: number },
): InboxScenarioContext {
  const source = `conformance-${randomUUID().slice(0, 8)}`;
  return {
    store,
    source,
    shortLeaseMs: o.shortLeaseMs,
    longLeaseMs: 10 * 60_000,
    deadlineMs: o.deadlineMs,
    envelope: (init = {}) => testEnvelope({ ...init, source }),
  };
}
