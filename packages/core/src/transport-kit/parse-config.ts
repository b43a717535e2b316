import { z } from 'zod';
import type { Logger } from '../observability/logger.js';
import { ConfigError } from '../errors.js';

/**
 * Validates a component's config against its zod schema and fills the schema's defaults, in the
 * one spot each factory calls before any I/O. A top-level field set to `undefined` counts as not
 * given, so `{ url: process.env.URL }` gets the default when the variable is unset. Throws
 * `ConfigError` `invalid <what>: …` naming every bad field; values never appear in the message
 * (secrets stay out of logs).
 *
 * @example
 * const config = parseConfig('sqs transport options', optionsSchema, options);
 */
export function parseConfig<S extends z.ZodType>(
  what: string,
  schema: S,
  input: unknown,
): z.output<S> {
  const parsed = schema.safeParse(definedFields(input));
  if (!parsed.success) throw new ConfigError(`invalid ${what}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

const definedFields = (input: unknown): unknown =>
  typeof input === 'object' && input !== null && Object.getPrototypeOf(input) === Object.prototype
    ? Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined))
    : input;

/** A config's `logger` field: any object (a pino-compatible `Logger`); give it its default. */
export const loggerSchema = z.custom<Logger>(
  (v) => typeof v === 'object' && v !== null,
  'must be a logger',
);
