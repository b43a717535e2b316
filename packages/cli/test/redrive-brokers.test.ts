import { randomBytes } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Transport } from '@onceflow/core';
import { defaultBrokers } from '@onceflow/adapter-kafka';
import {
  createRabbitMqTransport,
  defaultAmqpUrl,
  deleteRabbitMqQueues,
} from '@onceflow/adapter-rabbitmq';
import { createSqsTransport, deleteSqsQueues } from '@onceflow/adapter-sqs';
import { createEmbedded, type Embedded } from '@onceflow/embedded';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import {
  captureOutput,
  createDbFile,
  deadLetter,
  event,
  expectOnlyProgress,
  testWorker,
  waitFor,
} from './helpers.js';

// The AWS SDK's documented switch for its Node 20 support notice (aws/aws-sdk-js-v3#7983): tests only.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** A broker `--to` names, with a queue of this run's own. */
interface BrokerUnderTest {
  readonly to: string;
  readonly queue: string;
  readonly env: Readonly<Record<string, string>>;
  /** A transport on the same queue, for the worker; `start()` declares the queue. */
  readonly transport: Transport & { start(): Promise<void> };
  /** What `--to` says of a queue that does not exist. */
  readonly missing: (queue: string) => string;
  /** How the success line names the queue. */
  readonly destination: string;
  cleanup(): Promise<void>;
}

let db: string;
let embedded: Embedded;
beforeAll(async () => {
  db = await createDbFile();
  embedded = createEmbedded({ path: db });
  await embedded.start();
});
afterAll(() => embedded.close());

const run = async (env: Readonly<Record<string, string>>, ...argv: string[]) => {
  const io = captureOutput();
  const code = await runCli([...argv, '--db', db], { output: io.output, env });
  return { code, ...io };
};

/**
 * Redrive to a real broker: a missing queue is refused before anything changes; `--apply`
 * publishes a copy a worker on the broker completes, and the record's history says who redrove it.
 */
function describeRedriveTo(b: BrokerUnderTest): void {
  describe(`redrive --to ${b.to}`, () => {
    const source = `to-${b.to}`;
    beforeAll(async () => {
      await b.transport.start();
      await deadLetter(embedded.records, [event('evt_1', { source })]);
    }, 30_000);
    afterAll(async () => {
      await b.transport.close();
      await b.cleanup();
    });

    it('refuses a queue that does not exist, changing nothing', async () => {
      const typo = `${b.queue}-typo`;
      const argv = ['dead-letters', 'redrive', `${source}/evt_1`, '--to', b.to, '--apply'];
      const { code, errText } = await run(b.env, ...argv, '--queue', typo);
      expect(code).toBe(1);
      expect(errText()).toContain(b.missing(typo));
      expect((await embedded.records.get(source, 'evt_1'))?.state).toBe('dead-lettered');
    });

    it('--apply publishes a copy that a worker on the broker completes', async () => {
      const started = Date.now();
      const { code, out, err } = await run(
        b.env,
        'dead-letters',
        'redrive',
        `${source}/evt_1`,
        '--to',
        b.to,
        '--queue',
        b.queue,
        '--actor',
        'cli:eve',
        '--apply',
      );
      // Connecting and a publish the broker confirms (after its disk sync) may take over a second,
      // and a run that long rightly prints a progress line.
      expectOnlyProgress(err, 'redrive', Date.now() - started);
      expect([code, out]).toEqual([0, [`Redrove 1 dead letter to ${b.destination} as cli:eve.`]]);
      const worker = testWorker(b.transport, embedded.records);
      await worker.start();
      try {
        const done = async () =>
          (await embedded.records.get(source, 'evt_1'))?.state === 'completed';
        await waitFor(done, 'the redriven copy completed', 20_000);
      } finally {
        await worker.close();
      }
      const shown = await run(b.env, 'events', 'show', source, 'evt_1', '--json');
      const history = (
        shown.json().history as { state: string; actor?: string; note?: string }[]
      ).map((h) => [h.state, h.actor, h.note]);
      expect(history).toEqual([
        ['dead-lettered', 'worker-1', undefined],
        ['enqueued', 'cli:eve', 'redriven'],
        ['processing', 'worker-1', undefined],
        ['completed', 'worker-1', undefined],
      ]);
    }, 30_000);
  });
}

// The shared RabbitMQ; a queue of this run's own, deleted afterwards.
const amqpUrl = process.env.ONCEFLOW_AMQP_URL ?? defaultAmqpUrl();
const amqpQueue = `onceflow-cli-${randomBytes(4).toString('hex')}`;
describeRedriveTo({
  to: 'rabbitmq',
  queue: amqpQueue,
  env: { ONCEFLOW_AMQP_URL: amqpUrl },
  transport: createRabbitMqTransport({ url: amqpUrl, queue: amqpQueue }),
  missing: (q) => `no RabbitMQ queue "${q}"`,
  destination: `RabbitMQ queue "${amqpQueue}"`,
  cleanup: () => deleteRabbitMqQueues({ url: amqpUrl, queue: amqpQueue }),
});

// ElasticMQ from `node scripts/brokers.mjs up sqs`; FIFO queues of this run's own, deleted afterwards.
const endpoint = process.env.ONCEFLOW_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';
const sqsQueue = `onceflow-cli-${randomBytes(4).toString('hex')}`;
const client = new SQSClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
describeRedriveTo({
  to: 'sqs',
  queue: sqsQueue,
  env: { ONCEFLOW_SQS_ENDPOINT: endpoint },
  transport: createSqsTransport({ queue: sqsQueue, waitTimeSeconds: 1, client }),
  missing: (q) => `no SQS queue "${q}.fifo"`,
  destination: `SQS queue "${sqsQueue}.fifo"`,
  cleanup: async () => {
    await deleteSqsQueues(client, { queue: sqsQueue, fifo: true });
    client.destroy();
  },
});

describe('redrive --to kafka', () => {
  it('refuses a topic that does not exist, changing nothing', async () => {
    await deadLetter(embedded.records, [event('evt_1', { source: 'to-kafka' })]);
    const typo = `onceflow-cli-${randomBytes(4).toString('hex')}`;
    const { code, errText } = await run(
      { ONCEFLOW_KAFKA_BROKERS: defaultBrokers().join(',') },
      'dead-letters',
      'redrive',
      'to-kafka/evt_1',
      '--to',
      'kafka',
      '--queue',
      typo,
      '--apply',
    );
    expect(code).toBe(1);
    expect(errText()).toContain(`no Kafka topic "${typo}"`);
    expect((await embedded.records.get('to-kafka', 'evt_1'))?.state).toBe('dead-lettered');
  }, 30_000);
});
