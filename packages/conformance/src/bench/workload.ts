import { randomBytes } from 'node:crypto';
import {
  type Envelope,
  type RecordStore,
  type Transport,
  createEnvelope,
  createWorker,
  defineHandler,
} from '@onceflow/core';
import { type Measured, measure } from './measure.js';

export const BENCH_EVENT_TYPE = 'bench.event';

/** `count` envelopes of about `payloadBytes` each, ids unique to this call, keys spread over 64. */
export function benchEnvelopes(count: number, payloadBytes = 700): Envelope[] {
  const run = randomBytes(4).toString('hex');
  const filler = randomBytes(Math.max(0, Math.floor(payloadBytes / 2) - 40)).toString('hex');
  return Array.from({ length: count }, (_, i) =>
    createEnvelope({
      source: 'bench',
      id: `evt_${run}_${i}`,
      type: BENCH_EVENT_TYPE,
      key: `cus_${i % 64}`,
      payload: { i, filler },
    }),
  );
}

/** Publishes `envelopes` in concurrent slices of `batch`, at most `inFlight` slices at once. */
export async function publishAll(
  transport: Transport,
  envelopes: readonly Envelope[],
  batch: number,
  inFlight: number,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < envelopes.length) {
      const slice = envelopes.slice(next, next + batch);
      next += batch;
      await transport.publish(slice.map((envelope) => ({ envelope })));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

/**
 * What a raw consume loop does to match the worker's guard on the event record: takes each
 * event's record in `records` (`begin`) and completes it, as the worker does around a handler
 * that does nothing. The "+ records" rows of the benches put this beside the raw client, so the
 * gap left is the worker's own pipeline, not the record it keeps.
 *
 * @example
 * const guard = rawRecordGuard(createMemoryStore());
 * await guard(decodeEnvelope(message.value));
 */
export function rawRecordGuard(records: RecordStore): (envelope: Envelope) => Promise<void> {
  const lease = { leaseMs: 30_000, attempt: 1, consumer: 'raw', redrive: undefined };
  return async (envelope) => {
    const begun = await records.begin(envelope, lease);
    if (begun.status === 'acquired')
      await records.complete(envelope.source, envelope.id, begun.token);
  };
}

/**
 * Consumes `count` already-published deliveries through `createWorker` (the event record's
 * guard included) with a handler that does nothing, and times it from start to the last handled one.
 */
export async function consumeWithWorker(options: {
  readonly label: string;
  readonly transport: Transport;
  readonly records: RecordStore;
  readonly count: number;
  readonly concurrency: number;
  readonly timeoutMs?: number;
}): Promise<Measured> {
  const { transport, records, count, concurrency } = options;
  let handled = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const worker = createWorker({
    transport,
    records,
    concurrency,
    handlers: [
      defineHandler({
        type: BENCH_EVENT_TYPE,
        handle: async () => {
          if (++handled === count) done();
        },
      }),
    ],
  });
  try {
    return await measure(options.label, count, async () => {
      await worker.start();
      const timeout = options.timeoutMs ?? 120_000;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        finished,
        new Promise((_, reject) => {
          timer = setTimeout(
            () =>
              reject(new Error(`${options.label}: ${handled}/${count} handled in ${timeout} ms`)),
            timeout,
          );
        }),
      ]).finally(() => clearTimeout(timer));
    });
  } finally {
    await worker.close();
  }
}
