/**
 * A worker as its own process, so the harness can SIGKILL, SIGSTOP and SIGCONT it. Its one
 * handler writes the run's effect into the ledger, in the run's mode.
 *
 * env: CHAOS_STACK (the StackSpec as JSON), CHAOS_MODE (`helper` | `plain`), CHAOS_DIE
 * (`before-handler:<n>`: as the n-th handler starts; `after-effect:<n>`: after the n-th effect
 * was written, before the worker records the outcome and acks; `after-ack:<n>`: right after the
 * n-th ack resolved).
 */
import {
  createLogger,
  createWorker,
  type Delivery,
  defineHandler,
  type Transport,
} from '@onceflow/core';
import { z } from 'zod';
import { killPoint } from './die.js';
import { answerMemoryRequests } from './memory-report.js';
import { type HandlerMode, openStack, specFromEnv } from './stack.js';

const effect = z.object({
  id: z.string(),
  type: z.literal('chaos.effect'),
  data: z.object({ object: z.object({ n: z.number().int() }) }),
});

/** Forwards every property of `target`, methods bound to it, except those in `over`. */
function overriding<T extends object>(target: T, over: Partial<T>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (prop in over) return over[prop as keyof T];
      const value = Reflect.get(t, prop, t);
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

async function main(): Promise<void> {
  answerMemoryRequests();
  const spec = specFromEnv();
  const mode = (process.env.CHAOS_MODE ?? 'helper') as HandlerMode;
  const die = killPoint();
  const stack = await openStack(spec);
  // Dies right after an ack resolved: the broker has settled the message, the process is gone.
  const transport = overriding<Transport>(stack.transport, {
    consume: (handler, options) =>
      stack.transport.consume(
        (delivery: Delivery) =>
          handler(
            overriding(delivery, {
              ack: async () => {
                await delivery.ack();
                die('after-ack');
              },
            }),
          ),
        options,
      ),
  });
  const worker = createWorker({
    transport,
    records: stack.records,
    handlers: [
      defineHandler({
        type: 'chaos.effect',
        schema: effect,
        handle: async (_event, ctx) => {
          die('before-handler');
          await stack.ledger.write(ctx, mode);
          die('after-effect');
        },
      }),
    ],
    concurrency: 4,
    // As many attempts as the broker allows before it dead-letters a message itself.
    retry: {
      maxAttempts: Math.min(50, (transport.capabilities.deliveryLimit || 51) - 1),
      baseDelayMs: 50,
      maxDelayMs: 1_000,
    },
    shutdownTimeoutMs: 5_000,
    logger: createLogger({ level: 'fatal' }),
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await worker.close();
    await stack.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('message', (m: { kind?: string }) => {
    if (m.kind === 'stop') void stop();
  });
  // The harness is gone (it crashed or its test timed out): leave nothing running.
  process.on('disconnect', () => process.exit(1));
  await worker.start();
  process.send?.({ kind: 'ready' });
}

main().catch((err: unknown) => {
  console.error('chaos worker failed:', err);
  process.exit(1);
});
