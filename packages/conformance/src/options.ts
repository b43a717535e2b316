import type { Transport } from '@onceflow/core';

/** Time scales for a transport run. Raise them for slow or remote brokers. */
export interface TransportConformanceTimeouts {
  /** Lock length (`createTransport`'s `lockMs`) in the lock scenarios, in ms. Default 500. */
  readonly lockMs?: number | undefined;
  /** Delay asked of `retry` in the retry scenario, in ms. Default 400. */
  readonly retryDelayMs?: number | undefined;
  /** Longest wait for something the contract says will happen, in ms. Default 5000. */
  readonly deliveryMs?: number | undefined;
  /** How long to watch to show that something does not happen, in ms. Default 300. */
  readonly quietMs?: number | undefined;
  /** Timeout of each scenario, in ms. Default 30000. */
  readonly testMs?: number | undefined;
}

export interface TransportConformanceOptions {
  /**
   * Makes a transport on `queue` whose lock length (its config's `lockMs`, declared as
   * `capabilities.lock.ms`) is `lockMs`. Do not start it: publish and consume must work without
   * `start()`. Each scenario gets a fresh queue name; the suite calls this again with the same
   * name for a second consumer or a restart, and expects that instance to share the queue's messages.
   */
  readonly createTransport: (context: {
    readonly queue: string;
    readonly lockMs: number;
  }) => Promise<Transport>;
  /** Removes what a scenario left on the broker, after its transports are closed. */
  readonly cleanup?: ((context: { readonly queue: string }) => Promise<void>) | undefined;
  readonly timeouts?: TransportConformanceTimeouts | undefined;
  /**
   * Directory for the capability record (`<label>.json`), or `false` for none. Default:
   * `$ONCEFLOW_CONFORMANCE_DIR`, else `.conformance/` at the repository root.
   */
  readonly recordTo?: string | false | undefined;
}

export type ResolvedTimeouts = Required<{ [K in keyof TransportConformanceTimeouts]: number }>;

/** Defaults applied, every value a positive number. */
export function resolveTimeouts(t: TransportConformanceTimeouts = {}): ResolvedTimeouts {
  const pick = (value: number | undefined, fallback: number, name: string) => {
    const v = value ?? fallback;
    if (!(Number.isFinite(v) && v > 0))
      throw new RangeError(`timeouts.${name} must be > 0, got ${v}`);
    return v;
  };
  return {
    lockMs: pick(t.lockMs, 500, 'lockMs'),
    retryDelayMs: pick(t.retryDelayMs, 400, 'retryDelayMs'),
    deliveryMs: pick(t.deliveryMs, 5000, 'deliveryMs'),
    quietMs: pick(t.quietMs, 300, 'quietMs'),
    testMs: pick(t.testMs, 30_000, 'testMs'),
  };
}
