import type { z } from 'zod';
import { type Envelope, payloadJson } from '../envelope.js';
import { SchemaError } from '../errors.js';
import { jsonSyntaxProblem } from '../json-syntax.js';

/**
 * The payload as the handler sees it: parsed as JSON, then validated by the handler's schema
 * when it has one. Throws `SchemaError` (the event is then dead-lettered at once, with the issues
 * in the reason) for bytes that are not JSON or a payload the schema rejects.
 *
 * @example
 * const event = parseEvent(envelope, z.object({ id: z.string() }));
 */
export function parseEvent(envelope: Envelope, schema: z.ZodType | undefined): unknown {
  let json: unknown;
  try {
    json = payloadJson(envelope);
  } catch (err) {
    const detail = jsonSyntaxProblem(err);
    throw new SchemaError(`payload is not valid JSON (${detail})`, [
      { path: '', message: `payload is not valid JSON (${detail})` },
    ]);
  }
  if (schema === undefined) return json;
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  throw new SchemaError(`payload does not match the schema for "${envelope.type}"`, issues);
}
