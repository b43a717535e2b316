import type { IncomingWebhook } from '../contracts/verifier.js';
import { BadRequestError } from '../errors.js';
import { MIME_BATCH, MIME_STRUCTURED, type ParsedCloudEvent } from './attributes.js';
import { parseStructured } from './mapping.js';

const PREFIX = 'ce-';
const PERCENT = /%[0-9A-Fa-f]{2}/;

/** A binary-mode header value, percent-decoded as the HTTP binding (1.0.2, 3.1.3.2) encodes it. */
function headerValue(value: string): string {
  if (!PERCENT.test(value)) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function parseJson(body: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw new BadRequestError(`cloudevents: ${what} body is not JSON`);
  }
}

/**
 * The CloudEvents of an HTTP request (HTTP protocol binding 1.0): batched mode
 * (`application/cloudevents-batch+json`, a JSON array), structured mode
 * (`application/cloudevents+json`), else binary mode (attributes in `ce-*` headers, the body is
 * the data, `content-type` its `datacontenttype`). Call only after the request was authenticated.
 * `BadRequestError` when it is none of them.
 */
export function cloudEventsOf(request: IncomingWebhook): ParsedCloudEvent[] {
  const contentType = (request.headers['content-type'] ?? '').toLowerCase();
  if (contentType.startsWith(MIME_BATCH)) {
    const batch = parseJson(request.body, 'batch');
    if (!Array.isArray(batch)) throw new BadRequestError('cloudevents: a batch is a JSON array');
    return batch.map(parseStructured);
  }
  if (contentType.startsWith(MIME_STRUCTURED)) {
    return [parseStructured(parseJson(request.body, 'structured'))];
  }
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.startsWith(PREFIX)) attributes[name.slice(PREFIX.length)] = headerValue(value);
  }
  if (attributes.specversion === undefined) {
    throw new BadRequestError(
      'cloudevents: neither ce-specversion (binary mode) nor a CloudEvents content type',
    );
  }
  const datacontenttype = request.headers['content-type'];
  if (datacontenttype !== undefined) attributes.datacontenttype = datacontenttype;
  return [{ attributes, data: request.body.length > 0 ? request.body : undefined }];
}
