import { PayloadTooLargeError } from '../errors.js';
import { BodyConsumedError, BodyTimeoutError } from './body.js';
import type { ResolvedReceiverConfig } from './config.js';
import type { UnreadRequest } from './incoming.js';
import { type AllowedMethods, allowedMethods } from './methods.js';
import { type Reply, reply } from './reply.js';

/** Step 1 of the receive path, before anything is verified. */
export interface Intake {
  /**
   * Method, declared size, the cap on unfinished bodies, then the body within `maxBodyBytes` and
   * `bodyTimeoutMs`: the raw bytes, or the answer (405, 413, 503 `overloaded`, 408, 400, 500).
   * Nothing past the limit is buffered, nothing is stored. `name` must be a configured source.
   */
  read(name: string, req: UnreadRequest): Promise<Uint8Array | Reply>;
  /** 405 with the source's `Allow` header: for a handshake method whose request was no handshake. */
  refuse(name: string): Reply;
}

/**
 * One per receiver. The cap counts the bodies this receiver is reading right now (a slow client
 * holds a slot until its body is complete or `bodyTimeoutMs` ran out); touched from request
 * callbacks on one thread only.
 */
export function createIntake(cfg: ResolvedReceiverConfig): Intake {
  const { maxBodyBytes, bodyTimeoutMs, maxConcurrentBodies, retryAfterSec, logger } = cfg;
  const methods = new Map<string, AllowedMethods>();
  for (const [name, source] of Object.entries(cfg.sources)) {
    methods.set(name, allowedMethods(source));
  }
  let reading = 0;

  const refuse = (name: string): Reply => {
    const answer = reply('method-not-allowed', {}, retryAfterSec);
    return { ...answer, headers: { ...answer.headers, allow: methods.get(name)?.allow ?? 'POST' } };
  };

  return {
    refuse,
    async read(name, req) {
      if (!methods.get(name)?.has(req.method)) return refuse(name);
      const declared = req.contentLength;
      if (declared !== undefined && declared > maxBodyBytes) {
        return reply('too-large', {}, retryAfterSec);
      }
      if (reading >= maxConcurrentBodies) {
        logger.warn(
          { source: name, maxConcurrentBodies },
          'too many unfinished bodies; answering 503',
        );
        return reply('overloaded', {}, retryAfterSec);
      }
      reading++;
      try {
        return await req.readBody(maxBodyBytes, bodyTimeoutMs);
      } catch (err) {
        if (err instanceof PayloadTooLargeError) return reply('too-large', {}, retryAfterSec);
        if (err instanceof BodyTimeoutError) {
          logger.info({ source: name, bodyTimeoutMs }, err.message);
          return reply('timeout', {}, retryAfterSec);
        }
        if (err instanceof BodyConsumedError) {
          logger.error({ source: name }, err.message);
          return reply('error', {}, retryAfterSec);
        }
        logger.info({ err, source: name }, 'request body could not be read');
        return reply('bad-request', {}, retryAfterSec);
      } finally {
        reading--;
      }
    },
  };
}
