import { ConfigError } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_TIERS_MS, createKafkaTransport } from '../src/index.js';
import { resolveConfig } from '../src/config.js';

describe('kafka transport options', () => {
  it('fills every default from the topic alone', () => {
    const c = resolveConfig({ topic: 'payments', brokers: ['b1:9092'] });
    expect(c).toMatchObject({
      topic: 'payments',
      brokers: ['b1:9092'],
      groupId: 'payments.workers',
      clientId: 'onceflow',
      partitions: 3,
      retryTiersMs: DEFAULT_RETRY_TIERS_MS,
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 1_000,
      lockMs: 30_000,
      deliveryLimit: 20,
    });
  });

  it('treats an explicit undefined as absent', () => {
    expect(resolveConfig({ topic: 't', groupId: undefined, partitions: undefined }).groupId).toBe(
      't.workers',
    );
  });

  it('rejects with a ConfigError naming every bad field', () => {
    const bad = () =>
      resolveConfig({
        topic: 'has space',
        brokers: ['nohost'],
        partitions: 0,
        retryTiersMs: [10, 5],
        sessionTimeoutMs: 1_000,
        heartbeatIntervalMs: 2_000,
        lockMs: 0,
        deliveryLimit: 1.5,
      });
    expect(bad).toThrow(ConfigError);
    const message = (() => {
      try {
        bad();
      } catch (e) {
        return (e as Error).message;
      }
    })();
    for (const field of [
      'topic',
      'brokers',
      'partitions',
      'retryTiersMs',
      'lockMs',
      'deliveryLimit',
    ])
      expect(message, field).toContain(field);
  });

  it('rejects a heartbeat not below the session timeout, and unknown fields', () => {
    expect(() =>
      resolveConfig({ topic: 't', sessionTimeoutMs: 1_000, heartbeatIntervalMs: 1_000 }),
    ).toThrow(/heartbeatIntervalMs/);
    expect(() => resolveConfig({ topic: 't', partition: 3 } as never)).toThrow(/partition/);
  });
});

describe('kafka transport capabilities', () => {
  it('declare lockMs as a consumer-scoped lock and deliveryLimit, from the config', () => {
    const { capabilities } = createKafkaTransport({ topic: 't', lockMs: 5_000, deliveryLimit: 9 });
    expect(capabilities.lock).toEqual({ scope: 'consumer', ms: 5_000 });
    expect(capabilities.deliveryLimit).toBe(9);
    expect(capabilities.maxDelayMs).toBe(DEFAULT_RETRY_TIERS_MS.at(-1));
  });
});
