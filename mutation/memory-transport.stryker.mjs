import { suiteConfig } from './stryker.base.mjs';

/**
 * The memory transport, killed by the transport conformance suite run over it and by the memory
 * transport's own unit tests (its options, broker sharing, error text and timers, which the
 * contract leaves to each adapter). `memory-transport-contract.stryker.mjs`: the suite alone.
 */
process.env.MUTATION_SUITE = 'transport';

export default suiteConfig('memory-transport', [
  'packages/core/src/memory/transport.ts',
  'packages/core/src/memory/queue.ts',
  'packages/core/src/memory/queue-state.ts',
  'packages/core/src/memory/broker.ts',
  'packages/core/src/memory/stored-envelope.ts',
]);
