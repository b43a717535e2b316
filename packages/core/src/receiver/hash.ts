import * as crypto from 'node:crypto';
import { hashPayload } from '../envelope.js';

type OneShotHash = (algorithm: string, data: Uint8Array, encoding: 'hex') => string;
const oneShot = (crypto as { hash?: OneShotHash }).hash;

/**
 * `hashPayload` (sha-256, lower-case hex), computed with node's one-shot `crypto.hash` where it
 * exists (node >= 20.12): same digest, no Hash object per request, which the receive path's
 * garbage collector notices under load.
 */
export const sha256Hex: (bytes: Uint8Array) => string = oneShot
  ? (bytes) => oneShot('sha256', bytes, 'hex')
  : hashPayload;
