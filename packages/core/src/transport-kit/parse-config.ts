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

/**
 * `true` when a documented config interface and its zod schema's input (`z.input<typeof schema>`)
 * have the same fields, each optional where the other's is and of the same type (readonly
 * aside); `false` otherwise. Assert it beside the schema so the two cannot drift apart:
 *
 * @example
 * // a type error the day a field is added to one and not the other
 * const configMatches: SameFields<z.input<typeof configSchema>, MyTransportConfig> = true;
 */
export type SameFields<A, B> = [keyof A, keyof B] extends [keyof B, keyof A]
  ? [Required<A>, Required<B>] extends [Required<B>, Required<A>]
    ? [
        { [K in keyof A]-?: object extends Pick<A, K> ? never : K }[keyof A],
        { [K in keyof B]-?: object extends Pick<B, K> ? never : K }[keyof B],
      ] extends [
        { [K in keyof B]-?: object extends Pick<B, K> ? never : K }[keyof B],
        { [K in keyof A]-?: object extends Pick<A, K> ? never : K }[keyof A],
      ]
      ? true
      : false
    : false
  : false;
