// Runs @onceflow/testing from the installed tarballs with plain node: checkEffectivelyOnce catches
// a handler that charges without an idempotency key (the rejection's timeline names the fault)
// and passes the same handler with `ctx.idempotencyKey`; the same seed gives the same run.
import { defineHandler } from '@onceflow/core';
import { checkEffectivelyOnce, isEffectivelyOnceViolation, runSimulation } from '@onceflow/testing';

const events = [
  { id: 'evt_1', type: 'payment', key: 'cus_1', payload: { amount: 5 } },
  { id: 'evt_2', type: 'payment', key: 'cus_1', payload: { amount: 7 } },
];

/** Charges once per idempotency key, and every time without one. */
function paymentsApi() {
  const charges = new Map();
  const keys = new Set();
  return {
    charges,
    charge(eventId, key) {
      if (key !== undefined && keys.has(key)) return;
      if (key !== undefined) keys.add(key);
      charges.set(eventId, (charges.get(eventId) ?? 0) + 1);
    },
  };
}
const handler = (withKey) => (api) =>
  defineHandler({
    type: 'payment',
    handle: async (_event, ctx) =>
      api.charge(ctx.envelope.id, withKey ? ctx.idempotencyKey('charge') : undefined),
  });
const options = {
  events,
  setup: paymentsApi,
  invariant: (api) => events.every((e) => api.charges.get(e.id) === 1) || 'charged twice',
};

const caught = await checkEffectivelyOnce(handler(false), options).then(
  () => undefined,
  (err) => err,
);
if (!isEffectivelyOnceViolation(caught) || !/crash after effect|lock expires/.test(caught.message))
  throw new Error(`the unkeyed charge was not caught: ${caught}`);
await checkEffectivelyOnce(handler(true), options);

const run = (seed) =>
  runSimulation({
    handlers: [handler(true)(paymentsApi())],
    events,
    seed,
    faults: [{ kind: 'fail', event: 'evt_1', delivery: 1 }],
  }).then(String);
const [first, second] = [await run(3), await run(3)];
if (first !== second) throw new Error('the same seed gave two runs');
console.log('testing kit: the unkeyed charge is caught, the keyed one passes');
