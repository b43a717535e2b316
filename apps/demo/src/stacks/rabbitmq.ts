import { createRabbitMqTransport, deleteRabbitMqQueues } from '@onceflow/adapter-rabbitmq';
import { DEMO_LOCK_MS } from '../lock.js';
import type { Stack, StackOptions } from '../stack.js';
import { openPostgresStores, stackOnPostgres } from './postgres-stores.js';

/**
 * RabbitMQ (`$ONCEFLOW_AMQP_URL`, else 127.0.0.1:5672) for the queue `demo-<runId>`, with inbox,
 * processed marks and ledger in PostgreSQL. The run's owner deletes the queue, its dead-letter
 * queue and its retry queues on close.
 */
export async function rabbitmqStack(options: StackOptions): Promise<Stack> {
  const stores = await openPostgresStores(options);
  const queue = `demo-${options.runId}`;
  return stackOnPostgres({
    broker: 'rabbitmq',
    options,
    stores,
    transport: createRabbitMqTransport({
      queue,
      connectionName: 'onceflow-demo',
      lockMs: DEMO_LOCK_MS,
    }),
    remove: () => deleteRabbitMqQueues({ queue }),
  });
}
