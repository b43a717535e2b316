import type { Transport } from '@onceflow/core';
import type { Target } from '../target.js';

/**
 * Imports a broker adapter (and its client) only when its store is named, turning a missing
 * package into an error that says what to install.
 */
export async function loadAdapter<T>(
  store: string,
  packages: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(`--store ${store} needs the packages ${packages} installed`);
    }
    throw err;
  }
}

/** Starts a broker transport for the dead-letter commands (no consumer, no inbox). */
export async function transportTarget(transport: Transport): Promise<Target> {
  try {
    await transport.start();
  } catch (err) {
    await transport.close();
    throw err;
  }
  return { transport, close: () => transport.close() };
}
