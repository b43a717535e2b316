import { ConfigError } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_DELAYS_MS, parseRabbitMqOptions } from '../src/config.js';

describe('rabbitmq options', () => {
  it('fills every default from the queue alone', () => {
    const config = parseRabbitMqOptions({ queue: 'payments', url: undefined });
    expect(config).toMatchObject({
      queue: 'payments',
      queueType: 'auto',
      retryDelaysMs: DEFAULT_RETRY_DELAYS_MS,
      maxUnconfirmed: 1024,
      lockMs: 30_000,
      deliveryLimit: 20,
      maxMessageBytes: 8 * 1024 * 1024,
      reconnectMinMs: 100,
      reconnectMaxMs: 5_000,
      connectionName: 'onceflow',
    });
    expect(config.url).toMatch(/^amqps?:\/\//);
  });

  it('rejects with a ConfigError naming every bad field', () => {
    const bad = () =>
      parseRabbitMqOptions({
        queue: '',
        queueType: 'stream' as 'classic',
        retryDelaysMs: [100, 50],
        maxUnconfirmed: 0,
        lockMs: 0,
        deliveryLimit: 0,
        reconnectMinMs: 500,
        reconnectMaxMs: 200,
      });
    expect(bad).toThrow(ConfigError);
    const message = (() => {
      try {
        bad();
      } catch (err) {
        return (err as Error).message;
      }
    })();
    const fields = ['queue', 'queueType', 'retryDelaysMs', 'maxUnconfirmed', 'lockMs'];
    for (const field of [...fields, 'deliveryLimit']) {
      expect(message).toContain(field);
    }
  });

  it('checks reconnectMaxMs against reconnectMinMs and refuses unknown fields', () => {
    expect(() =>
      parseRabbitMqOptions({ queue: 'q', reconnectMinMs: 500, reconnectMaxMs: 200 }),
    ).toThrow(/reconnectMaxMs/);
    expect(() => parseRabbitMqOptions({ queue: 'q', prefetch: 5 } as never)).toThrow(/prefetch/);
  });
});
