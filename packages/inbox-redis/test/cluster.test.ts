import { describeStoreConformance, waitUntil } from '@onceflow/conformance';
import { type RedisServer, startRedisServer } from '@onceflow/test-servers';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { createRedisInbox, type RedisInbox } from '../src/index.js';
import { randomPrefix } from './helpers.js';

/** Two cluster nodes of this test's own, each serving half of the hash slots. */
const NODES = [
  { port: 6395, slots: [0, 8191] },
  { port: 6396, slots: [8192, 16383] },
] as const;
const servers: RedisServer[] = [];
let cluster: Cluster | undefined;

beforeAll(async () => {
  for (const { port, slots } of NODES) {
    servers.push(
      await startRedisServer({
        port,
        args: ['--appendonly', 'no', '--cluster-enabled', 'yes', '--cluster-node-timeout', '2000'],
      }),
    );
    const node = new Redis({ host: '127.0.0.1', port });
    await node.call('CLUSTER', 'ADDSLOTSRANGE', slots[0], slots[1]);
    if (port !== NODES[0].port) await node.call('CLUSTER', 'MEET', '127.0.0.1', NODES[0].port);
    await node.quit();
  }
  const first = new Redis({ host: '127.0.0.1', port: NODES[0].port });
  await waitUntil(
    async () =>
      String(await first.call('CLUSTER', 'INFO')).includes('cluster_state:ok') || undefined,
    { timeoutMs: 15_000, message: 'the cluster to be ok' },
  );
  await first.quit();
  cluster = new Cluster([{ host: '127.0.0.1', port: NODES[0].port }]);
});

afterAll(async () => {
  cluster?.disconnect();
  for (const server of servers.splice(0)) await server[Symbol.asyncDispose]();
});

// Prefixes differ per store, so stores land on either node; each store's keys share one slot.
describeStoreConformance<RedisInbox>('redis-cluster', {
  createStore: async () => {
    if (!cluster) throw new Error('cluster not started');
    return createRedisInbox({ redis: cluster, prefix: randomPrefix() });
  },
});
