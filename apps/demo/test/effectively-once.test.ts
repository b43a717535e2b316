import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkEffectivelyOnce, type SimEvent } from '@onceflow/testing';
import { expect, test } from 'vitest';
import { demoHandlers } from '../src/handlers.js';
import { type PaymentsApi, startPaymentsApi } from '../src/payments.js';
import type { Stack } from '../src/stack.js';
import { embeddedStack } from '../src/stacks/embedded.js';

/** Two payments (one customer) and a push, as the demo's senders send them. */
const payment = (id: string, amount: number): SimEvent => ({
  id,
  source: 'stripe',
  type: 'payment_intent.succeeded',
  key: 'cus_1',
  payload: {
    id,
    type: 'payment_intent.succeeded',
    data: { object: { id: `pi_${id}`, amount, customer: 'cus_1' } },
  },
});
const events: readonly SimEvent[] = [
  payment('evt_1', 500),
  payment('evt_2', 700),
  {
    id: 'delivery_1',
    source: 'github',
    type: 'push',
    key: 'acme/app',
    payload: { after: 'abc123', repository: { full_name: 'acme/app' } },
  },
];

interface Run {
  readonly dir: string;
  readonly stack: Stack;
  readonly payments: PaymentsApi;
}

test("the demo's handlers are effectively-once under generated delivery histories", async () => {
  // Histories in which a handler ran again after a crash or a lost lock: the check is not vacuous.
  let rerun = 0;
  await checkEffectivelyOnce(
    (run: Run) =>
      demoHandlers({ ledger: run.stack.ledger, paymentsUrl: run.payments.url, outbound: false }),
    {
      events,
      numRuns: 40,
      setup: async (): Promise<Run> => {
        const dir = mkdtempSync(join(tmpdir(), 'onceflow-demo-check-'));
        // Every third first request fails (HTTP 500): the handler's retries are part of the history.
        const payments = await startPaymentsApi({ failFirstEvery: 3 });
        return { dir, payments, stack: await embeddedStack({ dir, runId: 'check', owner: true }) };
      },
      records: (run) => run.stack.records,
      teardown: async (run) => {
        await run.stack.close();
        await run.payments.close();
        rmSync(run.dir, { recursive: true, force: true });
      },
      invariant: async (run, result) => {
        if (result.timeline.some((s) => /crash after effect|lock lost/.test(s.text))) rerun += 1;
        const rows = await run.stack.ledger.rowsByEvent();
        const charges = run.payments.chargesByEvent();
        for (const e of events) {
          if (rows.get(e.id) !== 1) return `ledger has ${rows.get(e.id) ?? 0} rows for ${e.id}`;
          if (e.type === 'payment_intent.succeeded' && charges.get(e.id) !== 1)
            return `${e.id} was charged ${charges.get(e.id) ?? 0} times`;
        }
      },
    },
  );
  expect(rerun).toBeGreaterThan(0);
});
