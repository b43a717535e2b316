import { BadRequestError } from '../errors.js';

export type JsonObject = Record<string, unknown>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Parses JSON text; undefined when it is not a JSON object. */
function parseObject(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The body as UTF-8 text; undefined when the bytes are not valid UTF-8. */
export function bodyText(body: Uint8Array): string | undefined {
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

/**
 * Parses a body whose signature has already passed: call it only after verification, never
 * before. `BadRequestError` (400) when the verified body is not a JSON object.
 */
export function parseVerifiedJson(body: Uint8Array, sender: string): JsonObject {
  const text = bodyText(body);
  const parsed = text === undefined ? undefined : parseObject(text);
  if (parsed === undefined) {
    throw new BadRequestError(`${sender}: verified body is not a JSON object`);
  }
  return parsed;
}

/**
 * A JSON object, or undefined for anything else. For verified bodies that may legitimately be
 * something else (Shopify XML), and for Graph, whose only credential lives inside the body.
 */
export function tryParseJson(body: Uint8Array): JsonObject | undefined {
  const text = bodyText(body);
  return text === undefined ? undefined : parseObject(text);
}

/**
 * The value at a dotted path (`data.object.id`), or undefined. Walks the path by index: a path
 * without a dot is looked up as it is, with no segment array or substring made.
 */
export function field(value: unknown, path: string): unknown {
  let current = value;
  let from = 0;
  for (;;) {
    if (!isObject(current)) return undefined;
    const dot = path.indexOf('.', from);
    if (dot === -1) return current[from === 0 ? path : path.slice(from)];
    current = current[path.slice(from, dot)];
    from = dot + 1;
  }
}

/** A non-empty string at the path, or undefined. */
export function stringField(value: unknown, path: string): string | undefined {
  const found = field(value, path);
  return typeof found === 'string' && found !== '' ? found : undefined;
}

/** An identifier at the path: a non-empty string, or an integer written as a string. */
export function idField(value: unknown, path: string): string | undefined {
  const found = field(value, path);
  if (typeof found === 'number' && Number.isSafeInteger(found)) return String(found);
  return typeof found === 'string' && found !== '' ? found : undefined;
}

/**
 * JSON with object keys sorted at every level and no whitespace: two parses of the same data give
 * the same text whatever the sender's key order or spacing. Used where an id must be derived
 * from content (Graph).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export { isObject };
