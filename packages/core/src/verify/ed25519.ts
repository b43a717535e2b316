import { createPublicKey, type KeyObject, verify } from 'node:crypto';

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo: the 32 raw key bytes follow it. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** An Ed25519 public key from its 64 hex characters (as Discord shows it); undefined when malformed. */
export function ed25519PublicKey(hex: string): KeyObject | undefined {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return undefined;
  return createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, Buffer.from(hex, 'hex')]),
    format: 'der',
    type: 'spki',
  });
}

/** True when `signature` is any of `keys`' Ed25519 signature over the parts, concatenated. */
export function anyEd25519Matches(
  keys: readonly KeyObject[],
  parts: readonly (string | Uint8Array)[],
  signature: Buffer | undefined,
): boolean {
  if (signature?.length !== 64) return false;
  const data = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
  let matched = false;
  for (const key of keys) if (verify(null, data, key, signature)) matched = true;
  return matched;
}
