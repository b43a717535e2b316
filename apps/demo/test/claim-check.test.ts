import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SQSClient,
  type SQSClientConfig,
} from '@aws-sdk/client-sqs';
import { createKafkaTransport, removeKafkaTopology } from '@onceflow/adapter-kafka';
import { createSqsTransport, deleteSqsQueues } from '@onceflow/adapter-sqs';
import {
  type Envelope,
  type RecordStore,
  type Transport,
  createEnvelope,
  createLogger,
  createReceiver,
  createWorker,
  defineHandler,
  stripe,
} from '@onceflow/core';
import { claimCheckReference } from '@onceflow/core/kit';
import { createPostgresInbox, migrate } from '@onceflow/inbox-postgres';
import { Kafka } from 'kafkajs';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A 5 MiB signed Stripe webhook in claim-check mode, through a real receiver over HTTP, onto SQS
// (ElasticMQ, 256 KiB limit) and Kafka (1 MiB limit), into a worker, with the PostgreSQL store.

// The tests run on Node 20: silence the AWS SDK's support notice (as the demo does).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const pgUrl = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const sqsConfig: SQSClientConfig = {
  endpoint: process.env.ONCEFLOW_SQS_ENDPOINT ?? 'http://127.0.0.1:9324',
  region: 'us-east-1',
  credentials: { accessKeyId: 'onceflow', secretAccessKey: 'onceflow' },
};
const kafkaBrokers = (process.env.ONCEFLOW_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const MiB = 1024 * 1024;
const TYPE = 'invoice.bulky';
const SECRET = `whsec_${randomBytes(16).toString('hex')}`;

/** A unique marker in the payload: the broker's copy must not contain it, nor any payload byte. */
function bulkyEvent(): { id: string; secret: string; body: string } {
  const id = `evt_${randomBytes(8).toString('hex')}`;
  const secret = `card_${randomBytes(12).toString('hex')}`;
  const blob = randomBytes(Math.ceil((5 * MiB) / 2)).toString('hex'); // 5 MiB of text
  const body = JSON.stringify({ id, type: TYPE, data: { object: { secret, blob } } });
  return { id, secret, body };
}

let pool: pg.Pool;
const schemas: string[] = [];

async function openStore() {
  const schema = `cc_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  await migrate(pool, { schema });
  return createPostgresInbox({ pool, schema });
}

interface Run {
  readonly server: Server;
  readonly url: string;
}

async function listen(
  store: Parameters<typeof createReceiver>[0]['inbox'],
  transport: Transport,
): Promise<Run> {
  const receiver = createReceiver({
    sources: { stripe: stripe({ secrets: [SECRET] }) },
    inbox: store,
    transport,
    maxBodyBytes: 6 * MiB,
    claimCheck: 'oversize',
  });
  const server = createServer(receiver.serverOptions, receiver.nodeHandler());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/webhooks/stripe` };
}

const post = (url: string, body: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({
        payload: body,
        secret: SECRET,
      }),
    },
    body,
  });

/** A worker whose one handler collects the payloads it got. */
function collectingWorker(transport: Transport, records: RecordStore) {
  const got: { id: string; payload: Buffer }[] = [];
  const worker = createWorker({
    transport,
    records,
    claimCheck: true,
    retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 500 },
    handlers: [
      defineHandler({
        type: TYPE,
        handle: async (_event, ctx) => {
          got.push({ id: ctx.envelope.id, payload: Buffer.from(ctx.envelope.payload) });
        },
      }),
    ],
    concurrency: 2,
  });
  return { worker, got };
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What a payload byte leak would look like: the marker, and any run of the payload's hex blob. */
function expectNoPayload(raw: string, event: { secret: string; body: string }) {
  expect(raw).not.toContain(event.secret);
  expect(raw).not.toContain(event.body.slice(200, 232));
  expect(raw.length).toBeLessThan(2048);
  expect(JSON.parse(raw)).toMatchObject({ v: 1, ref: 1, type: TYPE });
  expect(JSON.parse(raw)).not.toHaveProperty('payload');
}

beforeAll(() => {
  pool = new pg.Pool({ connectionString: pgUrl, max: 6 });
});

afterAll(async () => {
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

describe('claim-check over SQS (ElasticMQ) with the PostgreSQL store', () => {
  const client = new SQSClient(sqsConfig);
  const queue = `onceflow-cc-${randomBytes(4).toString('hex')}`;
  const transport = createSqsTransport({ queue, client, waitTimeSeconds: 1, lockMs: 20_000 });
  afterAll(async () => {
    await transport.close();
    await deleteSqsQueues(client, { queue, fifo: true }).catch(() => {});
    client.destroy();
  });

  it('a 5 MiB signed webhook: the queue holds only its reference, the handler gets it whole once', async () => {
    const store = await openStore();
    await transport.start();
    const run = await listen(store, transport);
    const event = bulkyEvent();
    try {
      const res = await post(run.url, event.body);
      expect(res.status).toBe(202);
      expect((await post(run.url, event.body)).status).toBe(200); // the sender's retry: a duplicate

      // The broker's copy, read with the SQS client and left on the queue (visibility 0).
      const { QueueUrl } = await client.send(
        new GetQueueUrlCommand({ QueueName: `${queue}.fifo` }),
      );
      const raw = await client.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          WaitTimeSeconds: 5,
        }),
      );
      expect(raw.Messages).toHaveLength(1);
      expectNoPayload(raw.Messages![0]!.Body!, event);

      const { worker, got } = collectingWorker(transport, store);
      await worker.start();
      try {
        await until(
          'the event completed',
          async () => (await store.get('stripe', event.id))?.state === 'completed',
        );
        await new Promise((r) => setTimeout(r, 1500)); // a second delivery would show by now
        expect(got).toHaveLength(1);
        expect(got[0]!.id).toBe(event.id);
        expect(got[0]!.payload.equals(Buffer.from(event.body))).toBe(true);
      } finally {
        await worker.close();
      }
    } finally {
      run.server.close();
    }
  }, 120_000);

  it('a small webhook in oversize mode travels whole', async () => {
    const store = await openStore();
    const queue2 = `onceflow-cc-${randomBytes(4).toString('hex')}`;
    const small = createSqsTransport({ queue: queue2, client, waitTimeSeconds: 1 });
    await small.start();
    const run = await listen(store, small);
    try {
      const id = `evt_${randomBytes(8).toString('hex')}`;
      const body = JSON.stringify({ id, type: TYPE, data: { object: { note: 'tiny-marker' } } });
      expect((await post(run.url, body)).status).toBe(202);
      const { QueueUrl } = await client.send(
        new GetQueueUrlCommand({ QueueName: `${queue2}.fifo` }),
      );
      const raw = await client.send(
        new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 0, WaitTimeSeconds: 5 }),
      );
      expect(raw.Messages?.[0]?.Body).toContain('tiny-marker');
    } finally {
      run.server.close();
      await small.close();
      await deleteSqsQueues(client, { queue: queue2, fifo: true }).catch(() => {});
    }
  }, 60_000);

  it('a reference whose payload is not in the store is dead-lettered at once with the reason', async () => {
    const store = await openStore(); // another store than the one that claimed it: nothing stored
    const queue3 = `onceflow-cc-${randomBytes(4).toString('hex')}`;
    const t = createSqsTransport({ queue: queue3, client, waitTimeSeconds: 1 });
    const envelope: Envelope = createEnvelope({
      source: 'stripe',
      id: `evt_${randomBytes(8).toString('hex')}`,
      type: TYPE,
      payload: new TextEncoder().encode('{"secret":"never-stored"}'),
    });
    const { worker, got } = collectingWorker(t, store);
    try {
      await t.start();
      await t.publish([{ envelope: claimCheckReference(envelope) }]);
      await worker.start();
      await until(
        'the dead letter',
        async () => (await store.get('stripe', envelope.id))?.state === 'dead-lettered',
      );
      const record = await store.get('stripe', envelope.id);
      expect(record?.reason).toMatch(/^claim-check: no stored payload for stripe\/evt_/);
      expect(record?.attempts).toBe(1);
      expect(got).toHaveLength(0);
    } finally {
      await worker.close();
      await t.close();
      await deleteSqsQueues(client, { queue: queue3, fifo: true }).catch(() => {});
    }
  }, 60_000);
});

describe('claim-check over Kafka with the PostgreSQL store', () => {
  const topic = `onceflow-cc-${randomBytes(4).toString('hex')}`;
  const config = {
    topic,
    brokers: kafkaBrokers,
    partitions: 2,
    retryTiersMs: [1_000, 60_000],
    sessionTimeoutMs: 6_000,
    rebalanceTimeoutMs: 10_000,
    heartbeatIntervalMs: 500,
    fetchWaitMs: 200,
    logger: createLogger({ level: 'error' }),
  };
  const transport = createKafkaTransport(config);
  afterAll(async () => {
    await transport.close();
    await removeKafkaTopology(config).catch(() => {});
  });

  it('a 5 MiB signed webhook: the topic holds only its reference, the handler gets it whole once', async () => {
    const store = await openStore();
    const { worker, got } = collectingWorker(transport, store);
    await worker.start();
    const run = await listen(store, transport);
    const event = bulkyEvent();
    const kafka = new Kafka({ clientId: 'cc-test', brokers: kafkaBrokers, logLevel: 0 });
    const reader = kafka.consumer({ groupId: `cc-reader-${randomBytes(4).toString('hex')}` });
    try {
      expect((await post(run.url, event.body)).status).toBe(202);
      await until(
        'the event completed',
        async () => (await store.get('stripe', event.id))?.state === 'completed',
      );
      await new Promise((r) => setTimeout(r, 1500));
      expect(got).toHaveLength(1);
      expect(got[0]!.payload.equals(Buffer.from(event.body))).toBe(true);

      // The broker's copy, read from the topic's beginning by a consumer group of its own.
      const values: string[] = [];
      await reader.connect();
      await reader.subscribe({ topic, fromBeginning: true });
      await reader.run({
        eachMessage: async ({ message }) => {
          values.push(message.value?.toString('utf8') ?? '');
        },
      });
      await until('the raw record', () => values.length >= 1, 30_000);
      expect(values).toHaveLength(1);
      expectNoPayload(values[0]!, event);
    } finally {
      await reader.disconnect().catch(() => {});
      await worker.close();
      run.server.close();
    }
  }, 120_000);
});
