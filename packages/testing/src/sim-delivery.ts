import type { Envelope } from '@onceflow/core';
import type { Fault } from './faults.js';
import type { TimelineLine } from './timeline.js';

/**
 * One delivery the simulation made, as the transport, the record store and the fault step see
 * it. They find it by the delivery's envelope (each delivery carries an envelope object of its
 * own) and, once the processing lease is taken, by its token.
 */
export interface SimDelivery {
  /** The event's id. */
  readonly event: string;
  /** Which delivery of the event this is, counting every copy (1 = the first). */
  readonly number: number;
  readonly attempt: number;
  /** The one-delivery fault planned for it: a crash, a lock expiry or a transient failure. */
  readonly fault: Fault | undefined;
  /** Where its notes go; a new line once it resumes after a pause. */
  line: TimelineLine;
  /** The process died: nothing this attempt does reaches the store or the broker any more. */
  crashed: boolean;
  /** Another delivery of the same message started after this one's lock expired. */
  lockLost: boolean;
  /** Pauses the attempt at a lock-expiry point until the simulation resumes it. */
  pauseHere(): Promise<void>;
}

/** Finds a delivery by its envelope object or its processing-lease token. */
export interface DeliveryRegistry {
  byEnvelope(envelope: Envelope): SimDelivery | undefined;
  byToken(token: string | undefined): SimDelivery | undefined;
  add(envelope: Envelope, delivery: SimDelivery): void;
  addToken(token: string, delivery: SimDelivery): void;
}

export function createDeliveryRegistry(): DeliveryRegistry {
  const envelopes = new WeakMap<Envelope, SimDelivery>();
  const tokens = new Map<string, SimDelivery>();
  return {
    byEnvelope: (envelope) => envelopes.get(envelope),
    byToken: (token) => (token === undefined ? undefined : tokens.get(token)),
    add: (envelope, delivery) => {
      envelopes.set(envelope, delivery);
    },
    addToken: (token, delivery) => {
      tokens.set(token, delivery);
    },
  };
}
