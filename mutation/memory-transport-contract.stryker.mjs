import { suiteConfig } from './stryker.base.mjs';
import transport from './memory-transport.stryker.mjs';

/**
 * The memory transport's mutants against the transport conformance suite alone (not part of
 * `pnpm mutation`): what a user's adapter run through the suite would have checked.
 */
process.env.MUTATION_SUITE = 'transport-contract';

export default suiteConfig('memory-transport-contract', transport.mutate);
