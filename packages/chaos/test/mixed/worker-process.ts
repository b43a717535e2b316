/**
 * A worker of a mixed-store shape as its own process, so the test can SIGKILL it: the receiver's
 * inbox is Redis (deliveries from BullMQ) or the embedded SQLite file (its queue), the event
 * record PostgreSQL, where the handler writes its ledger row and the processed mark in one
 * transaction.
 *
 * env: MIXED_SPEC (`MixedSpec` as JSON); MIXED_DIE_BEFORE_MARK=n: SIGKILLs itself as the n-th
 * inbox mark starts, after the record was written and before the inbox heard of it or the broker
 * was acked (the window the redelivery must repair).
 */
import { createWorker, defineHandler, type InboxOutcomes, NonRetryableError } from '@onceflow/core';
import { createPostgresInbox, markProcessed, withTransaction } from '@onceflow/inbox-postgres';
import pg from 'pg';
import type { MixedSpec } from './spec.js';
import { openReceiverSide } from './stack.js';

async function main(): Promise<void> {
  const spec = JSON.parse(process.env.MIXED_SPEC ?? '') as MixedSpec;
  const dieAt = Number(process.env.MIXED_DIE_BEFORE_MARK ?? 0);
  const pool = new pg.Pool({ connectionString: spec.pgUrl, max: 4 });
  pool.on('error', () => {});
  const records = createPostgresInbox({ pool, schema: spec.schema });
  const side = await openReceiverSide(spec);
  let marks = 0;
  const mark: InboxOutcomes['markProcessed'] = (source, id) => {
    if (++marks === dieAt) process.kill(process.pid, 'SIGKILL');
    return side.inbox.markProcessed(source, id);
  };
  const inbox = dieAt > 0 ? { ...side.inbox, markProcessed: mark } : side.inbox;
  const ledger = `"${spec.schema}".ledger`;
  const worker = createWorker({
    transport: side.transport,
    records,
    inbox,
    handlers: [
      defineHandler({
        type: 'mixed.effect',
        handle: async (event, ctx) => {
          const n = (event as { data: { object: { n: number } } }).data.object.n;
          if (spec.rejected.includes(n)) throw new NonRetryableError(`event ${n} is refused`);
          await withTransaction(pool, async (client) => {
            await client.query(`INSERT INTO ${ledger} (event_id) VALUES ($1)`, [ctx.envelope.id]);
            await markProcessed(client, ctx, { schema: spec.schema });
          });
        },
      }),
    ],
    concurrency: 4,
    retry: { maxAttempts: 5, baseDelayMs: 50, maxDelayMs: 500 },
    consumer: process.env.MIXED_NAME ?? 'mixed-worker',
  });
  await worker.start();
  process.send?.({ kind: 'ready' });
  process.on('message', async (m: { kind?: string }) => {
    if (m.kind !== 'stop') return;
    await worker.close();
    await side.close();
    await pool.end();
    process.exit(0);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
