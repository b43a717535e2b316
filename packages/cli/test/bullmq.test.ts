import { randomBytes } from 'node:crypto';
import { createBullmqTransport, deleteBullmqQueue } from '@onceflow/adapter-bullmq';
import { describeBrokerDeadLetters } from './broker-dead-letters.js';

// The shared Redis; a queue (and key prefix) of this run's own, deleted afterwards.
const url = process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';
const config = {
  url,
  queue: 'dead-letter-commands',
  prefix: `onceflow-cli-${randomBytes(4).toString('hex')}`,
};

describeBrokerDeadLetters({
  store: 'bullmq',
  queue: config.queue,
  env: { ONCEFLOW_REDIS_URL: url, ONCEFLOW_BULLMQ_PREFIX: config.prefix },
  transport: createBullmqTransport(config),
  cleanup: () => deleteBullmqQueue(config),
  missingMessage: undefined,
});
