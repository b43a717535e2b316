import type { Span } from '@opentelemetry/api';
import { INBOX_HEADER, storeIdOf } from '../contracts/inbox.js';
import type { Source, TenantRequest } from '../contracts/source.js';
import type { Verifier, VerifiedEvent } from '../contracts/verifier.js';
import { type Envelope, hashPayload } from '../envelope.js';
import { BadRequestError, SecretsLookupError, SignatureError } from '../errors.js';
import { isoFormatter } from '../iso-time.js';
import { injectReceipt, traceReceipt, traceVerify } from '../observability/trace-receipt.js';
import { acceptMany, acceptOne } from './accept.js';
import type { ResolvedReceiverConfig } from './config.js';
import { headerPicker, TENANT_HEADER } from './headers.js';
import { IncomingWebhookImpl, type UnreadRequest } from './incoming.js';
import { createIntake } from './intake.js';
import { combine, type ReceiveOutcome, type Reply, reply } from './reply.js';
import type { RequestRoute } from './route.js';

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
): (route: RequestRoute, req: UnreadRequest) => Promise<Reply> {
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
    route: RequestRoute,
    source: Source,
    req: UnreadRequest,
    receipt: Span,
  ): Promise<Reply> => {
    const name = route.source;
    const body = await intake.read(name, req);
    if (!(body instanceof Uint8Array)) return body;

    const webhook = new IncomingWebhookImpl(req, body);
    const receivedAt = now();
    let events: readonly VerifiedEvent[];
    let tenant = route.tenant;
    try {
      let verifier: Verifier = source.verifier;
      if (source.verifierFor !== undefined) {
        const resolved = await verifierOf(source.verifierFor, webhook, route);
        verifier = resolved.verifier;
        tenant = resolved.tenant ?? tenant;
      }
      const handshake = verifier.handshake?.(webhook, receivedAt);
      if (handshake) return { ...handshake, outcome: 'handshake' };
      if (req.method !== 'POST') return intake.refuse(name);
      events = traceVerify(tracer, receipt, name, () => verifier.verify(webhook, receivedAt));
    } catch (err) {
      if (err instanceof SecretsLookupError) {
        logger.error(
          { source: name, tenant: err.tenant, code: err.code, reason: err.message },
          'secrets lookup failed; answering 503',
        );
        return fail('secrets-unavailable');
      }
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
    if (tenant !== undefined) headers[TENANT_HEADER] = tenant;
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

  const traced = (route: RequestRoute, source: Source, req: UnreadRequest) =>
    traceReceipt(tracer, route.source, req.headers, (span) => receive(route, source, req, span));

  return async (route, req) => {
    const started = metrics ? performance.now() : 0;
    const name = route.source;
    const source = sources.get(name);
    const label = source ? name : UNKNOWN;
    let answer: Reply;
    try {
      if (draining()) answer = fail('draining');
      else answer = source ? await traced(route, source, req) : fail('unknown-source');
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

/**
 * A per-tenant source's verifier for this request (its lookup's own errors pass through). The
 * tenant it names wins over the path's: a source reading it from a header or the body says which.
 */
async function verifierOf(
  verifierFor: NonNullable<Source['verifierFor']>,
  webhook: IncomingWebhookImpl,
  route: RequestRoute,
): Promise<{ verifier: Verifier; tenant?: string | undefined }> {
  const request: TenantRequest = {
    method: webhook.method,
    headers: webhook.headers,
    body: webhook.body,
    get url() {
      return webhook.url;
    },
    source: route.source,
    pathTenant: route.tenant,
  };
  return verifierFor(request);
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
    headers: e.headers === undefined ? headers : { ...headers, ...e.headers },
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
