import { z } from 'zod';
import type { ConsumeOptions } from '../contracts/transport.js';
import { parseConfig } from './parse-config.js';

const schema = z.object({ concurrency: z.number().int().min(1) });

/**
 * Validates `consume` options: `concurrency` a positive integer. Throws `ConfigError` otherwise.
 *
 * @example
 * const { concurrency } = parseConsumeOptions(options);
 */
export function parseConsumeOptions(options: ConsumeOptions): ConsumeOptions {
  return parseConfig('consume options', schema, options);
}
