import { z } from 'zod';
import type { ConsumeOptions, TransportCapabilities } from '../contracts/transport.js';
import { ConfigError } from '../errors.js';
import { parseConfig } from './parse-config.js';

const schema = z.object({
  concurrency: z.number().int().min(1),
  lockMs: z.number().int().min(1),
});

/**
 * Validates `consume` options against the transport's capabilities: `concurrency` a positive
 * integer, `lockMs` a positive integer no longer than `capabilities.lock.maxMs`. Throws
 * `ConfigError` otherwise.
 *
 * @example
 * const { concurrency, lockMs } = parseConsumeOptions(options, this.capabilities);
 */
export function parseConsumeOptions(
  options: ConsumeOptions,
  capabilities: Pick<TransportCapabilities, 'lock'>,
): ConsumeOptions {
  const parsed = parseConfig('consume options', schema, options);
  if (parsed.lockMs > capabilities.lock.maxMs) {
    throw new ConfigError(
      `lockMs ${parsed.lockMs} exceeds this transport's longest lock (${capabilities.lock.maxMs} ms)`,
    );
  }
  return parsed;
}
