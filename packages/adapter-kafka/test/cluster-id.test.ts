import { describe, expect, it } from 'vitest';

interface KafkaScript {
  kafkaClusterId(random?: () => Buffer): string;
}
const script = new URL('../../../scripts/brokers/kafka.mjs', import.meta.url).href;
const { kafkaClusterId } = (await import(script)) as KafkaScript;

describe('the cluster id a new Kafka is formatted with', () => {
  it('never starts with "-", which kafka-storage format reads as an option (a CI start failed on it)', () => {
    // 0xf8 makes the first base64url character '-'.
    const draws = [Buffer.alloc(16, 0xf8), Buffer.alloc(16, 0x01)];
    const id = kafkaClusterId(() => draws.shift() ?? Buffer.alloc(16));
    expect(id).toBe(Buffer.alloc(16, 0x01).toString('base64url'));
    for (let i = 0; i < 2000; i++)
      expect(kafkaClusterId()).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
  });
});
