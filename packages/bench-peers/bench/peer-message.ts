/** The bench event as message-queue-toolkit's message: its id, type and timestamp fields, a zod schema. */
import { BENCH_EVENT_TYPE } from '@onceflow/conformance/bench';
import type { Envelope } from '@onceflow/core';
import { z } from 'zod';

export const BENCH_MESSAGE = z.object({
  id: z.string(),
  type: z.literal(BENCH_EVENT_TYPE),
  timestamp: z.string(),
  payload: z.unknown(),
});
export type BenchMessage = z.infer<typeof BENCH_MESSAGE>;

/** The bench envelope as the peer's message, with the same payload. */
export function peerMessage(e: Envelope): BenchMessage {
  return { id: e.id, type: BENCH_EVENT_TYPE, timestamp: e.receivedAt, payload: e.payload };
}
