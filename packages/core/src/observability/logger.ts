import { type Logger, type LoggerOptions, pino } from 'pino';

export type { Logger } from 'pino';

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
 * A pino logger with onceflow's redaction. `redactPaths` adds your own (payload fields such as
 * `payload.card`); the defaults cannot be removed.
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
): Logger {
  const { level, redactPaths = [], destination, ...rest } = options;
  const opts: LoggerOptions = {
    ...rest,
    level: level ?? process.env.ONCEFLOW_LOG_LEVEL ?? 'info',
    redact: { paths: [...DEFAULT_REDACT, ...redactPaths], censor: '[redacted]' },
  };
  return destination ? pino(opts, destination) : pino(opts);
}

/** A logger that drops everything (the default when none is given). */
export const silentLogger: Logger = pino({ level: 'silent' });
