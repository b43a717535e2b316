import { randomUUID } from 'node:crypto';
import type { Envelope, EnvelopeInit, EventRecord, Inbox, RecordStore } from '@onceflow/core';
import { testEnvelope } from '../envelopes.js';

/** What the store suite runs against: the receiver's claim and the event record on one row. */
export type ConformanceStore = Inbox & RecordStore;

export interface StoreScenarioContext {
  readonly store: ConformanceStore;
  /** A source name unique to this scenario, so scenarios never touch each other's records. */
  readonly source: string;
  /** A lease that runs out during the scenario. */
  readonly shortLeaseMs: number;
  /** A lease that never runs out during the scenario. */
  readonly longLeaseMs: number;
  readonly deadlineMs: number;
  /** An envelope of this scenario's source. */
  envelope(init?: Partial<EnvelopeInit>): Envelope;
  /** The record of `envelope`, failing the scenario when the store has none. */
  record(envelope: Envelope): Promise<EventRecord & { readonly envelope?: Envelope | undefined }>;
}

export interface StoreScenario {
  readonly name: string;
  run(ctx: StoreScenarioContext): Promise<void>;
}

export function storeScenarioContext(
  store: ConformanceStore,
  o: { shortLeaseMs: number; deadlineMs: number },
): StoreScenarioContext {
  const source = `conformance-${randomUUID().slice(0, 8)}`;
  return {
    store,
    source,
    shortLeaseMs: o.shortLeaseMs,
    longLeaseMs: 10 * 60_000,
    deadlineMs: o.deadlineMs,
    envelope: (init = {}) => testEnvelope({ ...init, source }),
    async record(envelope) {
      const found = await store.get(envelope.source, envelope.id);
      if (!found) throw new Error(`no record of ${envelope.source}/${envelope.id}`);
      return found;
    },
  };
}
