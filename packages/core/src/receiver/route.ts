import { lastSegment } from './fetch.js';

/** Which source (and tenant) a request path names. */
export interface RequestRoute {
  readonly source: string;
  readonly tenant: string | undefined;
}

/**
 * Reads `<prefix>/<source>[/<tenant>]` (query ignored, one trailing slash allowed). Without a
 * prefix the source is the last path segment and there is no tenant. A path outside the prefix,
 * or with more segments, names no source (`''`, answered 404).
 *
 * @example
 * routeOf('/webhooks/stripe/acme?x=1', '/webhooks'); // { source: 'stripe', tenant: 'acme' }
 */
export function routeOf(path: string, prefix: string | undefined): RequestRoute {
  if (prefix === undefined) return { source: lastSegment(path), tenant: undefined };
  const q = path.indexOf('?');
  let p = q === -1 ? path : path.slice(0, q);
  if (p.endsWith('/')) p = p.slice(0, -1);
  if (!p.startsWith(`${prefix}/`)) return { source: '', tenant: undefined };
  const [source = '', tenant, ...more] = p.slice(prefix.length + 1).split('/');
  if (more.length > 0 || tenant === '') return { source: '', tenant: undefined };
  return { source: decode(source), tenant: tenant === undefined ? undefined : decode(tenant) };
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}
