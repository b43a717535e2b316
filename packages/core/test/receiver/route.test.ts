import { describe, expect, it } from 'vitest';
import { routeOf } from '../../src/receiver/route.js';

describe('routeOf', () => {
  it('reads <prefix>/<source>[/<tenant>], or the last segment without a prefix', () => {
    expect(routeOf('/webhooks/stripe/acme?x=1', '/webhooks')).toEqual({
      source: 'stripe',
      tenant: 'acme',
    });
    expect(routeOf('/webhooks/stripe/', '/webhooks')).toEqual({
      source: 'stripe',
      tenant: undefined,
    });
    expect(routeOf('/webhooks/stripe/a%20b', '/webhooks')).toEqual({
      source: 'stripe',
      tenant: 'a b',
    });
    expect(routeOf('/webhooks/stripe/acme/x', '/webhooks').source).toBe('');
    expect(routeOf('/other/stripe', '/webhooks').source).toBe('');
    expect(routeOf('/webhooks/stripe/%E0', '/webhooks').tenant).toBe('');
    expect(routeOf('/api/webhooks/stripe', undefined)).toEqual({
      source: 'stripe',
      tenant: undefined,
    });
  });
});
