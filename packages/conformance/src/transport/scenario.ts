import type { TransportCapabilities } from '@onceflow/core';
import type { CapabilityName } from '../matrix.js';
import type { ResolvedTimeouts } from '../options.js';
import type { TransportFixture } from './fixture.js';

export interface ScenarioContext {
  readonly caps: TransportCapabilities;
  readonly t: ResolvedTimeouts;
  /**
   * A fresh queue and a transport on it (not started); dispose with `await using`. Its lock is
   * `lockMs`, by default one long enough that scenarios not about locks never see one expire.
   */
  fixture(options?: { readonly lockMs?: number }): Promise<TransportFixture>;
}

/** One named scenario: its name reads as the contract it checks. */
export interface TransportScenario {
  readonly name: string;
  /** Capabilities whose declared value this scenario proves (for the capability matrix). */
  readonly proves: readonly CapabilityName[];
  run(ctx: ScenarioContext): Promise<void>;
}

/** Scenarios for a transport with these capabilities (some depend on what is declared). */
export type ScenarioGroup = (
  caps: TransportCapabilities,
  t: ResolvedTimeouts,
) => TransportScenario[];
