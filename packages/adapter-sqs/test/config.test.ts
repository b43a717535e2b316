import { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigError } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { parseSqsOptions } from '../src/config.js';

const clientConfig = { region: 'us-east-1' };

const messageOf = (run: () => unknown): string => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('sqs options', () => {
  it('fills every default from the queue and a client config alone', () => {
    expect(parseSqsOptions({ queue: 'payments', clientConfig, fifo: undefined })).toMatchObject({
      queue: 'payments',
      fifo: true,
      createQueues: true,
      lockMs: 30_000,
      deliveryLimit: 20,
      waitTimeSeconds: 10,
      maxMessageBytes: 1024 * 1024 - 8 * 1024,
    });
  });

  it('rejects with a ConfigError naming every bad field', () => {
    const message = messageOf(() =>
      parseSqsOptions({
        queue: 'has.dot',
        clientConfig,
        lockMs: 12 * 3_600_000 + 1,
        deliveryLimit: 0,
        waitTimeSeconds: 21,
        maxMessageBytes: 2 * 1024 * 1024,
      }),
    );
    for (const field of [
      'queue',
      'lockMs',
      'deliveryLimit',
      'waitTimeSeconds',
      'maxMessageBytes',
    ]) {
      expect(message).toContain(field);
    }
  });

  it('wants exactly one of client and clientConfig, and refuses unknown fields', () => {
    const client = new SQSClient(clientConfig);
    expect(messageOf(() => parseSqsOptions({ queue: 'q' }))).toMatch(/client or clientConfig/);
    expect(messageOf(() => parseSqsOptions({ queue: 'q', client, clientConfig }))).toMatch(
      /exactly one/,
    );
    expect(parseSqsOptions({ queue: 'q', client }).client).toBe(client);
    expect(
      messageOf(() => parseSqsOptions({ queue: 'q', clientConfig, region: 'x' } as never)),
    ).toMatch(/region/);
    client.destroy();
  });
});
