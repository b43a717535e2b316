import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { INBOX_HEADER } from '../../src/contracts/inbox.js';
import { StoreUnavailableError, TransportUnavailableError } from '../../src/errors.js';
import { postStripe, stripeEvent, stripeHeaders, until } from './helpers.js';
import { startReceiver } from './setup.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('receiver over node:http', () => {
  it('accepts a new event: 202, one publish of the envelope as received', async () => {
    await using r = await startReceiver();
    const body = stripeEvent('evt_new');
    const res = await postStripe(r.url, body, {
      headers: { traceparent: TRACEPARENT, 'x-custom': 'dropped' },
    });

    expect(res.status).toBe(202);
    expect(res.json).toEqual({ status: 'accepted', id: 'evt_new' });
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
    const envelope = r.spies.publish.mock.calls[0]![0][0]!.envelope;
    expect(envelope).toMatchObject({
      id: 'evt_new',
      source: 'stripe',
      type: 'payment_intent.succeeded',
      key: 'cus_1',
      payloadHash: createHash('sha256').update(body).digest('hex'),
    });
    expect(Buffer.from(envelope.payload).toString()).toBe(body);
    expect(envelope.headers).toEqual({
      'content-type': 'application/json',
      traceparent: TRACEPARENT,
      // The inbox that claimed it, so a worker can notice its inbox option is missing.
      [INBOX_HEADER]: r.inbox.storeId,
    });
    expect(envelope.occurredAt).toBe(new Date(JSON.parse(body).created * 1000).toISOString());
    expect(r.transport.broker.depth('default')).toBe(1);
    expect((await r.inbox.stats()).enqueued).toBe(1);
    expect(await r.count('webhooksReceived', { source: 'stripe', outcome: 'accepted' })).toBe(1);
    expect(
      (await r.metrics.receiptLag.get()).values.find((v) => v.metricName?.endsWith('_count'))
        ?.value,
    ).toBe(1);
  });

  it('keeps extra headers named in keepHeaders, and sender delivery headers', async () => {
    await using r = await startReceiver({ config: { keepHeaders: ['X-Tenant'] } });
    await postStripe(r.url, stripeEvent('evt_h'), {
      headers: { 'x-tenant': 't-9', 'webhook-id': 'msg_1', authorization: 'Bearer x' },
    });
    const { headers } = r.spies.publish.mock.calls[0]![0][0]!.envelope;
    expect(headers).toEqual({
      'content-type': 'application/json',
      'x-tenant': 't-9',
      'webhook-id': 'msg_1',
      [INBOX_HEADER]: r.inbox.storeId,
    });
  });

  it('answers 200 to a duplicate and publishes nothing more', async () => {
    await using r = await startReceiver();
    const body = stripeEvent('evt_dup');
    expect((await postStripe(r.url, body)).status).toBe(202);
    const again = await postStripe(r.url, body); // Stripe's retry: same bytes, fresh signature

    expect(again.status).toBe(200);
    expect(again.json).toEqual({ status: 'duplicate', id: 'evt_dup' });
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
    expect(r.transport.broker.depth('default')).toBe(1);
    expect(await r.count('duplicatesSuppressed', { source: 'stripe', layer: 'inbox' })).toBe(1);
  });

  it('answers 200 to a payload conflict, records it and does not publish it', async () => {
    await using r = await startReceiver();
    expect((await postStripe(r.url, stripeEvent('evt_c', { type: 'a.b' }))).status).toBe(202);
    const conflict = await postStripe(r.url, stripeEvent('evt_c', { type: 'c.d' }));

    expect(conflict.status).toBe(200);
    expect(conflict.json).toEqual({ status: 'conflict', id: 'evt_c' });
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
    expect(r.spies.recordConflict).toHaveBeenCalledTimes(1);
    expect((await r.inbox.stats()).conflicts).toBe(1);
    expect(await r.count('payloadConflicts', { source: 'stripe' })).toBe(1);
  });

  it.each([
    ['a wrong secret', { secret: 'whsec_other' }],
    ['a stale timestamp', { timestamp: Math.floor(Date.now() / 1000) - 400 }],
    ['a future timestamp', { timestamp: Math.floor(Date.now() / 1000) + 400 }],
  ])('answers 401 to %s without touching the inbox or the broker', async (_, options) => {
    await using r = await startReceiver();
    const res = await postStripe(r.url, stripeEvent('evt_bad'), options);

    expect(res.status).toBe(401);
    expect(res.json).toEqual({ status: 'unauthorized' });
    expect(r.storeCalls()).toBe(0);
    expect(await r.count('webhooksReceived', { source: 'stripe', outcome: 'unauthorized' })).toBe(
      1,
    );
  });

  it('answers 401 to a missing signature and to a body changed after signing', async () => {
    await using r = await startReceiver();
    const body = stripeEvent('evt_x');
    const missing = await fetch(r.url, { method: 'POST', body });
    const tampered = await fetch(r.url, {
      method: 'POST',
      headers: stripeHeaders(body),
      body: body.replace('4200', '4201'),
    });

    expect([missing.status, tampered.status]).toEqual([401, 401]);
    expect(r.storeCalls()).toBe(0);
  });

  it('answers 400 to a signed body without an event id, with no store work', async () => {
    await using r = await startReceiver();
    const body = JSON.stringify({ object: 'event', type: 'x.y', created: 1 });
    const res = await postStripe(r.url, body);

    expect(res.status).toBe(400);
    expect(res.json).toEqual({ status: 'bad-request' });
    expect(r.storeCalls()).toBe(0);
  });

  it('answers 404 to an unknown source without store work or a path-valued label', async () => {
    await using r = await startReceiver();
    const res = await fetch(`${r.server.url}/webhooks/nope`, { method: 'POST', body: '{}' });

    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ status: 'unknown-source' });
    expect(r.storeCalls()).toBe(0);
    expect(
      await r.count('webhooksReceived', { source: '(unknown)', outcome: 'unknown-source' }),
    ).toBe(1);
  });

  it('answers 503 with Retry-After when the inbox throws, and accepts the retry', async () => {
    await using r = await startReceiver({ config: { retryAfterSec: 7 } });
    r.spies.claim.mockRejectedValueOnce(new StoreUnavailableError('connection refused'));
    const body = stripeEvent('evt_store');
    const res = await postStripe(r.url, body);

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.json).toEqual({ status: 'unavailable', id: 'evt_store' });
    expect(r.spies.publish).not.toHaveBeenCalled();
    expect((await postStripe(r.url, body)).status).toBe(202);
  });

  it('answers 503 when publish throws, releases the claim, and accepts the retry', async () => {
    await using r = await startReceiver();
    r.spies.publish.mockRejectedValueOnce(new TransportUnavailableError('broker down'));
    const body = stripeEvent('evt_broker');
    const res = await postStripe(r.url, body);

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(r.spies.release).toHaveBeenCalledTimes(1);
    expect(r.spies.markEnqueued).not.toHaveBeenCalled();
    expect(r.transport.broker.depth('default')).toBe(0);

    const retry = await postStripe(r.url, body);
    expect(retry.status).toBe(202);
    expect(r.transport.broker.depth('default')).toBe(1);
  });

  it('answers 503 in-flight while another request holds the claim', async () => {
    await using r = await startReceiver();
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => {
      unblock = resolve;
    });
    r.spies.publish.mockImplementationOnce(async (messages) => {
      await blocked;
      await r.transport.publish(messages);
    });
    const body = stripeEvent('evt_busy');
    const first = postStripe(r.url, body);
    await until(() => r.spies.publish.mock.calls.length === 1);
    const second = await postStripe(r.url, body);

    expect(second.status).toBe(503);
    expect(second.json).toEqual({ status: 'in-flight', id: 'evt_busy' });
    expect(second.headers.get('retry-after')).toBe('5');
    unblock();
    expect((await first).status).toBe(202);
    expect((await postStripe(r.url, body)).status).toBe(200);
  });

  it('claims with a 10 s lease by default: a crashed request holds off retries for 10 s at most', async () => {
    await using r = await startReceiver();
    await postStripe(r.url, stripeEvent('evt_lease'));
    expect(r.spies.claim.mock.calls[0]?.[1]).toEqual({ leaseMs: 10_000 });
  });

  it('still answers 202 when markEnqueued fails after a durable publish', async () => {
    await using r = await startReceiver();
    r.spies.markEnqueued.mockRejectedValueOnce(new StoreUnavailableError('timeout'));
    const res = await postStripe(r.url, stripeEvent('evt_mark'));

    expect(res.status).toBe(202);
    expect(r.transport.broker.depth('default')).toBe(1);
    expect((await r.inbox.stats()).pending).toBe(1); // the relay will re-publish; dedupe absorbs it
  });
});
