import type { OutgoingMessage, Transport } from '../contracts/transport.js';
import type { Envelope } from '../envelope.js';
import { UsageError } from '../errors.js';
import { encodedSizeBound } from '../transport-kit/message-size.js';
import { claimCheckReference, encodeEnvelope } from '../wire.js';
import type { ClaimCheckMode } from './mode.js';

type Publisher = Pick<Transport, 'publish'> &
  Partial<Pick<Transport, 'capabilities' | 'name' | 'destination'>>;

/** Whether the wire encoding of `e` is over `maxBytes` (encodes only when the bound says it may be). */
function isOversize(e: Envelope, maxBytes: number): boolean {
  if (encodedSizeBound(e) <= maxBytes) return false;
  return Buffer.byteLength(encodeEnvelope(e), 'utf8') > maxBytes;
}

/**
 * The transport with claim-check applied to what is published through it: each envelope (with
 * `always`), or each one whose encoding is over `capabilities.maxMessageBytes` (with `oversize`),
 * goes out as its reference (`claimCheckReference`), everything else as it is. Only `publish` is
 * wrapped; the receiver publishes through it. Throws `UsageError` for `oversize` over a transport
 * that declares no `capabilities.maxMessageBytes`.
 */
export function claimCheckPublisher<T extends Publisher>(
  transport: T,
  mode: Exclude<ClaimCheckMode, false>,
): Pick<Transport, 'publish'> & Partial<Pick<Transport, 'name' | 'destination'>> {
  const maxBytes = transport.capabilities?.maxMessageBytes;
  if (mode === 'oversize' && typeof maxBytes !== 'number') {
    throw new UsageError(
      "claimCheck 'oversize' needs a transport with capabilities.maxMessageBytes",
    );
  }
  const refer = (m: OutgoingMessage): OutgoingMessage =>
    mode === 'always' || isOversize(m.envelope, maxBytes!)
      ? { ...m, envelope: claimCheckReference(m.envelope) }
      : m;
  // Name and destination stay visible to `publishTraced`, for the send span's name and attributes.
  return {
    publish: (messages) => transport.publish(messages.map(refer)),
    name: transport.name,
    destination: transport.destination,
  };
}
