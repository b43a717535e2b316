import { suiteConfig } from './stryker.base.mjs';

/** The memory transport, killed only by the transport conformance suite run over it. */
process.env.MUTATION_SUITE = 'transport';

export default suiteConfig('memory-transport', [
  'packages/core/src/memory/transport.ts',
  'packages/core/src/memory/queue.ts',
  'packages/core/src/memory/queue-state.ts',
  'packages/core/src/memory/broker.ts',
  'packages/core/src/memory/stored-envelope.ts',
]);
