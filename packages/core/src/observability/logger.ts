import { type LoggerOptions, type Logger as PinoLogger, pino } from 'pino';

/**
 * What onceflow logs through: pino's calling convention (fields first, then the message), so a
 * pino logger fits as it is and another logger needs a few lines of adapter. `fields` may carry an
 * `err` (an `Error`). Calls must not throw; onceflow does not wait on them.
 */
export interface Logger {
  debug(fields: object, message?: string): void;
  debug(message: string): void;
  info(fields: object, message?: string): void;
  info(message: string): void;
  warn(fields: object, message?: string): void;
  warn(message: string): void;
  error(fields: object, message?: string): void;
  error(message: string): void;
  /** A logger adding `bindings` to every line (the worker makes one per delivery). */
  child(bindings: Record<string, unknown>): Logger;
}

/** Paths always redacted: secrets, signatures and auth headers. */
export const DEFAULT_REDACT: readonly string[] = [
  'secret',
  'secrets',
  '*.secret',
  '*.secrets',
  'headers.authorization',
  'headers["stripe-signature"]',
  'headers["x-hub-signature-256"]',
  'headers["x-hub-signature"]',
  'headers["x-slack-signature"]',
  'headers["x-shopify-hmac-sha256"]',
  'headers["webhook-signature"]',
  'headers["x-signature"]',
  'clientState',
  '*.clientState',
];

/**
 * The default `Logger`: pino with onceflow's redaction. `redactPaths` adds your own (payload fields
 * such as `payload.card`); the defaults cannot be removed.
 *
 * @example
 * const log = createLogger({ level: 'info', redactPaths: ['payload.email'] });
 */
export function createLogger(
  options: {
    level?: string;
    redactPaths?: readonly string[];
    destination?: pino.DestinationStream;
  } & Omit<LoggerOptions, 'redact' | 'level'> = {},
): PinoLogger {
  const { level, redactPaths = [], destination, ...rest } = options;
  const opts: LoggerOptions = {
    ...rest,
    level: level ?? process.env.ONCEFLOW_LOG_LEVEL ?? 'info',
    redact: { paths: [...DEFAULT_REDACT, ...redactPaths], censor: '[redacted]' },
  };
  return destination ? pino(opts, destination) : pino(opts);
}

const drop = (): void => {};

/** A logger that drops everything (the default when none is given). */
export const silentLogger: Logger = {
  debug: drop,
  info: drop,
  warn: drop,
  error: drop,
  child: () => silentLogger,
};
