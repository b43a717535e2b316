import { describe, expect, it } from 'vitest';
import { ConfigError, LockLostError, TransportUnavailableError } from '../../src/index.js';
import { brokerCall } from '../../src/kit.js';

describe('brokerCall', () => {
  it('returns what the call returns, sync or async', async () => {
    expect(await brokerCall('q publish', () => 1)).toBe(1);
    expect(await brokerCall('q publish', async () => 2)).toBe(2);
  });

  it('turns a broker failure into TransportUnavailableError with the failure as cause', async () => {
    const cause = new Error('ECONNREFUSED');
    const err = await brokerCall('q publish', () => {
      throw cause;
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportUnavailableError);
    expect((err as Error).message).toBe('q publish failed: ECONNREFUSED');
    expect((err as Error).cause).toBe(cause);
  });

  it('turns what lockLost recognises into LockLostError, using describe for the text', async () => {
    const gone = Object.assign(new Error('handle'), { name: 'ReceiptHandleIsInvalid' });
    const err = await brokerCall(
      'q ack',
      async () => {
        throw gone;
      },
      {
        lockLost: (e) => (e as Error).name === 'ReceiptHandleIsInvalid',
        describe: (e) => (e as Error).name,
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockLostError);
    expect((err as Error).message).toBe('q ack: the lock is lost (ReceiptHandleIsInvalid)');
  });

  it('lets onceflow errors through unchanged', async () => {
    const own = new ConfigError('bad');
    await expect(
      brokerCall('q start', () => {
        throw own;
      }),
    ).rejects.toBe(own);
  });
});
