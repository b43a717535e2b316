import type { TenantRequest } from '../contracts/source.js';
import { BadRequestError } from '../errors.js';
import { idField, tryParseJson } from '../verify/json.js';

/**
 * Where a request names its tenant: the path segment after the source (`/webhooks/:source/:tenant`,
 * the default), a header, or a dotted field of the JSON body (Stripe Connect's `account`).
 *
 * A body field is read before the signature is checked, only to choose whose secrets must match:
 * a forged tenant can only make the request fail verification against that tenant's secrets.
 */
export type TenantFrom = 'path' | { readonly header: string } | { readonly field: string };

/** Reads the tenant; `BadRequestError` (→ 400) when the request names none. */
export function tenantOf(from: TenantFrom, request: TenantRequest): string {
  const tenant =
    from === 'path'
      ? request.pathTenant
      : 'header' in from
        ? request.headers[from.header.toLowerCase()]
        : idField(tryParseJson(request.body), from.field);
  if (tenant === undefined || tenant === '') {
    throw new BadRequestError(`${request.source}: the request names no tenant (${describe(from)})`);
  }
  return tenant;
}

const describe = (from: TenantFrom) =>
  from === 'path'
    ? 'path /:source/:tenant'
    : 'header' in from
      ? `header ${from.header}`
      : `body.${from.field}`;
