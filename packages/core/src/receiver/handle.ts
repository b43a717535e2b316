import type { Span } from '@opentelemetry/api';
import { INBOX_HEADER, storeIdOf } from '../contracts/inbox.js';
import type { Source } from '../contracts/source.js';
import type { VerifiedEvent } from '../contracts/verifier.js';
import { type Envelope, hashPayload } from '../envelope.js';
import { BadRequestError, SignatureError } from '../errors.js';
import { isoFormatter } from '../iso-time.js';
import { injectReceipt, traceReceipt, traceVerify } from '../observability/trace-receipt.js';
import { acceptMany, acceptOne } from './accept.js';
import type { ResolvedReceiverConfig } from './config.js';
import { headerPicker } from './headers.js';
import { IncomingWebhookImpl, type UnreadRequest } from './incoming.js';
import { createIntake } from './intake.js';
import { combine, type ReceiveOutcome, type Reply, reply } from './reply.js';

/** Source label for requests naming no configured source (request paths must not become labels). */
const UNKNOWN = '(unknown)';

/**
 * The receive path, framework-neutral: method, size and deadline (intake) → handshake → verify →
 * inbox → publish, in that order, each step answering for itself (see the README's status table).
 * Safe to call concurrently: the inbox's atomic claim is the only shared decision.
 */
export function createHandler(
  cfg: ResolvedReceiverConfig,
  draining: () => boolean = () => false,
): (name: string, req: UnreadRequest) => Promise<Reply> {
  const sources = new Map<string, Source>(Object.entries(cfg.sources));
  const pick = headerPicker(cfg.keepHeaders);
  const { tracer } = cfg;
  const intake = createIntake(cfg);
  const { retryAfterSec, logger, metrics, now } = cfg;
  const fail = (outcome: ReceiveOutcome) => reply(outcome, {}, retryAfterSec);
  const iso = isoFormatter();
  // Lets a worker whose records are another store notice a forgotten `inbox` option.
  const inboxId = storeIdOf(cfg.inbox);

  const receive = async (
    name: string,
    source: Source,
    req: UnreadRequest,
    receipt: Span,
  ): Promise<Reply> => {
    const body = await intake.read(name, req);
    if (!(body instanceof Uint8Array)) return body;

    const webhook = new IncomingWebhookImpl(req, body);
    const receivedAt = now();
    let events: readonly VerifiedEvent[];
    try {
      const handshake = source.verifier.handshake?.(webhook, receivedAt);
      if (handshake) return { ...handshake, outcome: 'handshake' };
      if (req.method !== 'POST') return intake.refuse(name);
      events = traceVerify(tracer, receipt, name, () =>
        source.verifier.verify(webhook, receivedAt),
      );
    } catch (err) {
      if (err instanceof SignatureError) {
        logger.warn(
          { source: name, code: err.code, reason: err.message },
          'webhook rejected: signature',
        );
        return fail('unauthorized');
      }
      if (err instanceof BadRequestError) {
        logger.info(
          { source: name, code: err.code, reason: err.message },
          'webhook rejected: bad request',
        );
        return fail('bad-request');
      }
      logger.error({ err, source: name }, 'verifier failed unexpectedly');
      return fail('error');
    }
    if (events.length === 0) return fail('bad-request');

    const headers = pick(req.headers);
    injectReceipt(receipt, headers);
    if (inboxId !== undefined) headers[INBOX_HEADER] = inboxId;
    const at = iso(receivedAt.getTime());
    if (metrics) observeLag(metrics.receiptLag, name, receivedAt, events);

    if (events.length === 1) {
      const envelope = envelopeOf(events[0]!, name, body, headers, at);
      return reply(await acceptOne(cfg, envelope), { id: envelope.id }, retryAfterSec);
    }
    const envelopes = events.map((e) => envelopeOf(e, name, body, headers, at));
    const outcomes = await acceptMany(cfg, envelopes);
    const detail = { events: envelopes.map((e, i) => ({ id: e.id, status: outcomes[i]! })) };
    return reply(combine(outcomes), detail, retryAfterSec);
  };

  const traced = (name: string, source: Source, req: UnreadRequest) =>
    traceReceipt(tracer, name, req.headers, (span) => receive(name, source, req, span));

  return async (name, req) => {
    const started = metrics ? performance.now() : 0;
    const source = sources.get(name);
    const label = source ? name : UNKNOWN;
    let answer: Reply;
    try {
      if (draining()) answer = fail('draining');
      else answer = source ? await traced(name, source, req) : fail('unknown-source');
    } catch (err) {
      // Only a store that throws synchronously gets here; nothing was acknowledged.
      logger.error({ err, source: label }, 'receive failed; answering 503');
      answer = fail('unavailable');
    }
    if (metrics) {
      const labels = { source: label, outcome: answer.outcome };
      metrics.webhooksReceived.inc(labels);
      metrics.receiveDuration.observe(labels, (performance.now() - started) / 1000);
    }
    return answer;
  };
}

/** The envelope of one verified event; `payload` is the event's own bytes or the whole raw body. */
function envelopeOf(
  e: VerifiedEvent,
  source: string,
  body: Uint8Array,
  headers: Record<string, string>,
  receivedAt: string,
): Envelope {
  const payload = e.payload ?? body;
  return {
    id: e.eventId,
    source,
    type: e.type,
    key: e.key,
    payload,
    headers,
    receivedAt,
    occurredAt: e.occurredAt,
    payloadHash: hashPayload(payload),
  };
}

function observeLag(
  histogram: { observe(labels: { source: string }, value: number): void },
  source: string,
  receivedAt: Date,
  events: readonly VerifiedEvent[],
): void {
  for (const e of events) {
    if (e.occurredAt === undefined) continue;
    const lag = (receivedAt.getTime() - Date.parse(e.occurredAt)) / 1000;
    if (Number.isFinite(lag)) histogram.observe({ source }, Math.max(0, lag));
  }
}
