/**
 * A receiver as its own process, so the harness can SIGKILL it: the webhook endpoint and the
 * relay (which re-publishes claims that a killed receiver never enqueued) over the run's stack.
 *
 * env: CHAOS_STACK (the StackSpec as JSON), CHAOS_PORT, CHAOS_SECRET (the Stripe signing secret),
 * CHAOS_DIE (`after-verify:<n>`, `after-claim:<n>`, `after-publish:<n>`: SIGKILL itself the n-th
 * time it passes that step of the receive path; `after-publish` is before `markEnqueued`).
 */
import { createServer } from 'node:http';
import {
  createLogger,
  createReceiver,
  createRelay,
  type Inbox,
  type Source,
  stripe,
  type Transport,
} from '@onceflow/core';
import { killPoint } from './die.js';
import { answerMemoryRequests } from './memory-report.js';
import { openStack, specFromEnv } from './stack.js';

async function main(): Promise<void> {
  answerMemoryRequests();
  const spec = specFromEnv();
  const port = Number(process.env.CHAOS_PORT);
  const secret = process.env.CHAOS_SECRET ?? '';
  const die = killPoint();
  const stack = await openStack(spec);

  const signed = stripe({ secrets: [secret] });
  const source: Source = {
    preset: signed.preset,
    verifier: {
      verify(request, now) {
        const events = signed.verifier.verify(request, now);
        die('after-verify');
        return events;
      },
    },
  };
  const inbox: Inbox = new Proxy(stack.inbox, {
    get(target, prop) {
      if (prop === 'claim')
        return async (...args: Parameters<Inbox['claim']>) => {
          const claim = await target.claim(...args);
          if (claim.status === 'new' || claim.status === 'stale-pending') die('after-claim');
          return claim;
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const transport: Transport = new Proxy(stack.transport, {
    get(target, prop) {
      if (prop === 'publish')
        return async (...args: Parameters<Transport['publish']>) => {
          await target.publish(...args);
          die('after-publish');
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

  const logger = createLogger({ level: 'fatal' });
  const receiver = createReceiver({ sources: { stripe: source }, inbox, transport, logger });
  const relay = createRelay({ inbox, transport, olderThanMs: 2_000, intervalMs: 500, logger });
  const server = createServer(receiver.serverOptions, receiver.nodeHandler());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  await relay.start();
  process.send?.({ kind: 'ready' });

  const stop = async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await relay.close();
    await stack.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('message', (m: { kind?: string }) => {
    if (m.kind === 'stop') void stop();
  });
  // The harness is gone (it crashed or its test timed out): leave nothing running.
  process.on('disconnect', () => process.exit(1));
}

main().catch((err: unknown) => {
  console.error('chaos receiver failed:', err);
  process.exit(1);
});
