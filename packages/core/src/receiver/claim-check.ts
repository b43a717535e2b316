import { assertClaimCheckStore } from '../claim-check/mode.js';
import { claimCheckPublisher } from '../claim-check/publish.js';
import type { ResolvedReceiverConfig } from './config.js';

/**
 * The config with claim-check applied: with `claimCheck` set, the inbox must keep claimed
 * envelopes (`UsageError` otherwise) and the receiver publishes through `claimCheckPublisher`.
 */
export function withClaimCheck(cfg: ResolvedReceiverConfig): ResolvedReceiverConfig {
  if (cfg.claimCheck === false) return cfg;
  assertClaimCheckStore('receiver config', cfg.inbox);
  return { ...cfg, transport: claimCheckPublisher(cfg.transport, cfg.claimCheck) };
}
