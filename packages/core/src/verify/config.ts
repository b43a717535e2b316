import { z } from 'zod';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** The usual five minutes of accepted clock skew for a signed timestamp. */
export const DEFAULT_TOLERANCE_SEC = 300;

/** One or more shared secrets. Several while rotating: any of them may match. */
export const secretsSchema = z
  .array(z.string().min(1, 'a secret is empty'))
  .min(1, 'at least one secret (list several while rotating)');

/** Accepted distance, either way, between a signed timestamp and the verifier's clock. */
export const toleranceSchema = z.number().int().positive().default(DEFAULT_TOLERANCE_SEC);
