import type { IncomingMessage } from 'node:http';
import { PayloadTooLargeError } from '../errors.js';

const EMPTY = new Uint8Array(0);

/** A plain Uint8Array view on the same memory (no copy), so envelopes hold one kind of bytes. */
const view = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

/** The request body was read before the receiver got it (a body parser mounted in front of it). */
export class BodyConsumedError extends Error {
  constructor() {
    super(
      'the request body was already consumed: mount the receiver without a body parser before it',
    );
    this.name = 'BodyConsumedError';
  }
}

/** The body did not arrive within the receiver's `bodyTimeoutMs` (answered 408, connection closed). */
export class BodyTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`the request body did not arrive within ${timeoutMs} ms`);
    this.name = 'BodyTimeoutError';
  }
}

/** The declared Content-Length, or undefined when absent or not a plain decimal number. */
export function declaredLength(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

/**
 * Reads a node request body, byte-exact. Rejects with `PayloadTooLargeError` as soon as more than
 * `limit` bytes arrived, and with `BodyTimeoutError` when the whole body has not arrived `timeoutMs`
 * after the read started: either way the stream is paused there and never buffered further (the
 * caller answers 413 or 408 and closes the connection). Listeners stay on the request until it is
 * collected; a settled read ignores them (inline callbacks, so no per-request named closures on
 * the hot path).
 */
export function readNodeBody(
  req: IncomingMessage,
  limit: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  if (req.readableEnded || req.readableDidRead) {
    // Waiting for 'end' would hang forever: something read the body before the receiver.
    return Promise.reject(new BodyConsumedError());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      req.pause();
      reject(new BodyTimeoutError(timeoutMs));
    }, timeoutMs);
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      settled = true;
      clearTimeout(timer);
      req.pause();
      reject(new PayloadTooLargeError(limit));
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (chunks.length === 0) resolve(EMPTY);
      else resolve(view(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    });
    req.on('error', (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(err);
    });
    req.on('close', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error('request closed before its body was complete'));
    });
  });
}

/**
 * Reads a Fetch API body, byte-exact. Past `limit` it cancels the stream and rejects with
 * `PayloadTooLargeError`, so nothing beyond the limit is buffered; when the whole body has not
 * arrived `timeoutMs` after the read started, it cancels the stream and rejects with
 * `BodyTimeoutError`.
 */
export async function readStreamBody(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  if (body === null) return EMPTY;
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BodyTimeoutError(timeoutMs)), timeoutMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), expired]);
      if (done) break;
      size += value.byteLength;
      if (size > limit) throw new PayloadTooLargeError(limit);
      chunks.push(value);
    }
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  } finally {
    clearTimeout(timer);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
