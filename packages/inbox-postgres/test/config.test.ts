import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';

describe('batching defaults', () => {
  it('gives claims and marks half the pool each, at least one slot', async () => {
    const slots = async (max: number | undefined) => {
      const pool = new pg.Pool(max === undefined ? {} : { max });
      try {
        const { batching } = resolveConfig({ pool });
        return batching === false ? undefined : batching.maxInFlight;
      } finally {
        await pool.end();
      }
    };
    expect(await slots(8)).toBe(4);
    expect(await slots(9)).toBe(4);
    expect(await slots(1)).toBe(1);
    expect(await slots(undefined)).toBe(5); // pg's own default pool of 10
  });

  it('keeps what is configured', async () => {
    const pool = new pg.Pool({ max: 8 });
    try {
      expect(resolveConfig({ pool, batching: { maxInFlight: 1 } }).batching).toEqual({
        maxBatch: 256,
        maxInFlight: 1,
      });
      expect(resolveConfig({ pool, batching: false }).batching).toBe(false);
    } finally {
      await pool.end();
    }
  });
});
