import { isOnceflowError } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { tempDbPath } from './helpers.js';

describe('check (readiness)', () => {
  it('the store answers while the file is open, and refuses once the instance is closed', async () => {
    const embedded = createEmbedded({ path: tempDbPath() });
    await expect(embedded.inbox.check(AbortSignal.timeout(5_000))).resolves.toBeUndefined();
    await embedded.close();
    const err = await embedded.inbox.check(AbortSignal.timeout(5_000)).catch((e: unknown) => e);
    expect(isOnceflowError(err, 'STORE_UNAVAILABLE')).toBe(true);
  });
});
