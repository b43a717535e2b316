import { ConfigError } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { type BullmqTransportConfig, parseBullmqConfig } from '../src/config.js';

const messageOf = (config: BullmqTransportConfig): string => {
  try {
    parseBullmqConfig(config);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('parseBullmqConfig', () => {
  it('fills the documented defaults', () => {
    expect(parseBullmqConfig({ queue: 'payments' })).toEqual({
      url: 'redis://127.0.0.1:6379',
      queue: 'payments',
      prefix: 'onceflow',
      deadLetterQueue: 'payments-dead-letters',
      dedupeWindowMs: 3_600_000,
      lockMs: 30_000,
      deliveryLimit: 20,
      maxMessageBytes: 4 * 1024 * 1024,
      publishTimeoutMs: 500,
      redis: {},
    });
  });

  it('keeps what is given', () => {
    const logger = { info() {} } as never;
    const config = parseBullmqConfig({
      queue: 'q',
      url: 'rediss://cache:6380',
      prefix: 'p',
      deadLetterQueue: 'dlq',
      dedupeWindowMs: 1_000,
      lockMs: 5,
      deliveryLimit: 1,
      maxMessageBytes: 10,
      stalledIntervalMs: 200,
      redis: { password: 'x' },
      logger,
    });
    expect(config).toMatchObject({
      deadLetterQueue: 'dlq',
      lockMs: 5,
      deliveryLimit: 1,
      stalledIntervalMs: 200,
      logger,
    });
    expect(config.redis).toEqual({ password: 'x' });
  });

  it('treats undefined as absent', () => {
    const config = parseBullmqConfig({
      queue: 'q',
      prefix: undefined,
      stalledIntervalMs: undefined,
    });
    expect(config.prefix).toBe('onceflow');
    expect(config.stalledIntervalMs).toBeUndefined();
  });

  it('names every invalid field in one ConfigError', () => {
    const message = messageOf({
      queue: 'a:b',
      url: '',
      prefix: 'x:y',
      deadLetterQueue: '',
      dedupeWindowMs: 999,
      lockMs: 0,
      deliveryLimit: 0,
      maxMessageBytes: 1.5,
      stalledIntervalMs: -1,
      redis: 'nope' as never,
      logger: 3 as never,
    });
    for (const field of [
      'queue',
      'url',
      'prefix',
      'deadLetterQueue',
      'dedupeWindowMs',
      'lockMs',
      'deliveryLimit',
      'maxMessageBytes',
      'stalledIntervalMs',
      'redis',
      'logger',
    ]) {
      expect(message).toContain(`at ${field}`);
    }
    expect(message).toContain('must not contain ":"');
  });

  it('refuses a deliveryLimit that is not a positive integer (the broker always gives up)', () => {
    expect(messageOf({ queue: 'q', deliveryLimit: false as never })).toContain('at deliveryLimit');
    expect(messageOf({ queue: 'q', deliveryLimit: 2.5 })).toContain('at deliveryLimit');
  });

  it('requires a queue', () => {
    expect(messageOf({} as BullmqTransportConfig)).toContain('at queue');
  });

  it('refuses a dead-letter queue equal to the queue', () => {
    expect(messageOf({ queue: 'q', deadLetterQueue: 'q' })).toMatch(
      /must differ from queue[\s\S]*at deadLetterQueue/,
    );
  });
});
