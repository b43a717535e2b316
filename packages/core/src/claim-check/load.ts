import type { RecordStore } from '../contracts/records.js';
import type { Delivery } from '../contracts/transport.js';
import { type Envelope, hashPayload } from '../envelope.js';
import { CLAIM_CHECK_HEADER, isClaimCheckReference } from '../wire.js';

/**
 * What the worker makes of a delivery's envelope:
 * - `envelope`: the one to handle (the delivery's own, or the stored envelope a reference names);
 * - `failure`: a reference the store cannot serve (nothing stored, or other bytes than the
 *   reference's hash): dead-letter it at once with this reason, retrying cannot help.
 */
export type LoadedEnvelope =
  | { readonly envelope: Envelope; readonly failure?: undefined }
  | { readonly envelope: Envelope; readonly failure: string };

/**
 * Resolves a claim-check reference (`isClaimCheckReference`) with `records.get(source, id)`: the
 * stored envelope, its payload checked against the reference's `payloadHash`, with the
 * reference's trace context (the delivery's own) over the stored headers. Any other envelope is
 * returned as it is, without I/O. A store error is thrown (the delivery is retried).
 */
export async function loadClaimed(
  records: RecordStore,
  envelope: Envelope,
): Promise<LoadedEnvelope> {
  if (!isClaimCheckReference(envelope)) return { envelope };
  const { source, id, payloadHash } = envelope;
  const stored = (await records.get(source, id))?.envelope;
  if (stored === undefined || isClaimCheckReference(stored)) {
    return {
      envelope,
      failure: `claim-check: no stored payload for ${source}/${id} (purged, or the worker reads another store than the receiver)`,
    };
  }
  const actual = hashPayload(stored.payload);
  if (actual !== payloadHash) {
    return {
      envelope,
      failure: `claim-check: the stored payload of ${source}/${id} does not match the reference's hash (stored ${actual}, reference ${payloadHash})`,
    };
  }
  const { [CLAIM_CHECK_HEADER]: _marker, ...trace } = envelope.headers;
  return { envelope: { ...stored, headers: { ...stored.headers, ...trace } } };
}

/**
 * The delivery with another envelope: every other member (settle, extend, signal, attempt) is the
 * original's, its methods called on the original.
 */
export function withEnvelope<D extends Delivery>(delivery: D, envelope: Envelope): D {
  return new Proxy(delivery, {
    get(target, prop) {
      if (prop === 'envelope') return envelope;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
