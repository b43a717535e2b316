import { randomBytes } from 'node:crypto';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type SqsTransportOptions, createSqsTransport } from '../src/index.js';

/** The SQS endpoint the tests use: ElasticMQ started by `node scripts/brokers.mjs up sqs`. */
export const endpoint = process.env.ONCEFLOW_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';

/** A client for the test endpoint, with dummy static credentials (a local server ignores them). */
export function testClient(): SQSClient {
  return new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'onceflow', secretAccessKey: 'onceflow' },
    maxAttempts: 2,
  });
}

/** Throws a clear error when nothing answers SQS requests at the endpoint. */
export async function assertSqsAnswers(client: SQSClient): Promise<void> {
  try {
    await client.send(new ListQueuesCommand({ MaxResults: 1 }), {
      abortSignal: AbortSignal.timeout(5000),
    });
  } catch (err) {
    throw new Error(
      `No SQS server answers at ${endpoint} (${err instanceof Error ? err.message : err}). ` +
        'Start ElasticMQ with `node scripts/brokers.mjs up sqs` (or `pnpm brokers:up sqs`), or set ONCEFLOW_SQS_ENDPOINT.',
    );
  }
}

/** A queue name unique to this run: `onceflow-<what>-<hex>`. */
export const uniqueQueue = (what: string): string =>
  `onceflow-${what}-${randomBytes(4).toString('hex')}`;

/**
 * A transport on the test endpoint sharing `client` (not started). One-second long polls: closing
 * a consumer waits for its open poll, and the tests close many.
 */
export const testTransport = (
  client: SQSClient,
  options: Omit<SqsTransportOptions, 'client' | 'clientConfig'>,
) => createSqsTransport({ client, waitTimeSeconds: 1, ...options });
