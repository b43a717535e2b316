import type { Transport } from '@onceflow/core';
import type { TransportTarget } from '../target.js';

/**
 * Imports a store's or broker's package (and its client) only when it is named, turning a
 * missing package into an error that says what to install.
 */
export async function loadPackages<T>(
  flag: string,
  packages: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(`${flag} needs the packages ${packages} installed`);
    }
    throw err;
  }
}

/** A broker transport to publish to (no consumer), closed with the command. */
export function transportTarget(transport: Transport, destination: string): TransportTarget {
  return { transport, destination, close: () => transport.close() };
}
