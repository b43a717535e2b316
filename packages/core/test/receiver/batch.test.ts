import { describe, expect, it } from 'vitest';
import { TransportUnavailableError } from '../../src/errors.js';
import { msgraph } from '../../src/verify/msgraph.js';
import { stripe } from '../../src/verify/stripe.js';
import { postStripe, STRIPE_SECRET, stripeEvent } from './helpers.js';
import { startReceiver } from './setup.js';

const CLIENT_STATE = 'graph-client-state-1';
const sources = {
  graph: msgraph({ clientStates: [CLIENT_STATE] }),
  stripe: stripe({ secrets: [STRIPE_SECRET] }),
};

const notification = (resource: string, clientState = CLIENT_STATE) => ({
  subscriptionId: 'sub-1',
  clientState,
  changeType: 'created',
  resource,
  subscriptionExpirationDateTime: '2030-01-01T00:00:00Z',
  tenantId: 't-1',
});

async function postGraph(url: string, items: object[]) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ value: items }),
  });
  return { status: res.status, json: (await res.json()) as { status: string; events?: unknown[] } };
}

describe('several events in one request (Microsoft Graph)', () => {
  it('answers the validation handshake with the token and does no store work', async () => {
    await using r = await startReceiver({ sources });
    const res = await fetch(`${r.server.url}/webhooks/graph?validationToken=abc%20123`, {
      method: 'POST',
    });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('abc 123');
    expect(r.storeCalls()).toBe(0);
    expect(await r.count('webhooksReceived', { source: 'graph', outcome: 'handshake' })).toBe(1);
  });

  it('answers 202 if any is new, 200 once all are duplicates', async () => {
    await using r = await startReceiver({ sources });
    const url = `${r.server.url}/webhooks/graph`;
    const a = notification('users/1/messages/a');
    const b = notification('users/1/messages/b');

    const first = await postGraph(url, [a, b]);
    expect(first.status).toBe(202);
    expect(first.json.events).toHaveLength(2);
    expect(r.spies.publish).toHaveBeenCalledTimes(1); // one publish for the whole request
    expect(r.transport.broker.depth('default')).toBe(2);

    const mixed = await postGraph(url, [b, notification('users/1/messages/c')]);
    expect(mixed.status).toBe(202);
    expect(mixed.json.events).toEqual([
      { id: expect.any(String), status: 'duplicate' },
      { id: expect.any(String), status: 'accepted' },
    ]);

    const again = await postGraph(url, [a, b]);
    expect(again).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect(r.transport.broker.depth('default')).toBe(3);
  });

  it('answers 503 if any event failed, and the retry completes the rest', async () => {
    await using r = await startReceiver({ sources });
    const url = `${r.server.url}/webhooks/graph`;
    const [a, b] = [notification('users/2/a'), notification('users/2/b')];
    await postGraph(url, [a]);
    r.spies.publish.mockRejectedValueOnce(new TransportUnavailableError('broker down'));

    const failed = await postGraph(url, [a, b]);
    expect(failed.status).toBe(503);
    expect(failed.json.events).toEqual([
      { id: expect.any(String), status: 'duplicate' },
      { id: expect.any(String), status: 'unavailable' },
    ]);
    expect((await postGraph(url, [a, b])).status).toBe(202);
    expect(r.transport.broker.depth('default')).toBe(2);
  });

  it('answers 401 when one notification has a wrong clientState', async () => {
    await using r = await startReceiver({ sources });
    const res = await postGraph(`${r.server.url}/webhooks/graph`, [
      notification('users/3/a'),
      notification('users/3/b', 'forged'),
    ]);
    expect(res.status).toBe(401);
    expect(r.storeCalls()).toBe(0);
  });
});

describe('concurrent identical deliveries', () => {
  it('publishes exactly once for 50 identical requests at once', async () => {
    await using r = await startReceiver();
    const body = stripeEvent('evt_storm');
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async () => (await postStripe(r.url, body)).status),
    );

    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.every((s) => s === 202 || s === 200 || s === 503)).toBe(true);
    expect(r.spies.publish).toHaveBeenCalledTimes(1);
    expect(r.spies.claim).toHaveBeenCalledTimes(50);
    // The losers' retries all land as duplicates.
    expect((await postStripe(r.url, body)).status).toBe(200);
    expect(r.transport.broker.depth('default')).toBe(1);
  });
});
