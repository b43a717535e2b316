import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { TransportCapabilities } from '@onceflow/core';

/** Capabilities a transport scenario proves; the matrix marks each as passed or failed. */
export type CapabilityName = keyof TransportCapabilities;

export type ScenarioStatus = 'passed' | 'failed' | 'not-run';

export interface ScenarioRecord {
  readonly name: string;
  readonly proves: readonly CapabilityName[];
  status: ScenarioStatus;
}

/**
 * One run's record, written as `<dir>/<label>.json` and read by `scripts/capability-matrix.mjs`.
 * Capabilities are JSON-safe: an infinite dedupe window is written as the string `"Infinity"`.
 */
export interface ConformanceRecord {
  readonly format: 1;
  readonly kind: 'transport' | 'inbox' | 'store';
  /** The label given to `describe…Conformance`. */
  readonly label: string;
  /** `transport.name` (transports) or the label (stores). */
  readonly name: string;
  readonly capabilities?: unknown;
  readonly scenarios: readonly ScenarioRecord[];
  /** False when some scenarios did not run (filtered or aborted run). */
  readonly complete: boolean;
  readonly recordedAt: string;
}

/** `$ONCEFLOW_CONFORMANCE_DIR`, else `.conformance` in the nearest directory holding `.git` or `pnpm-workspace.yaml`, else in the working directory. */
export function defaultRecordDir(): string {
  const fromEnv = process.env.ONCEFLOW_CONFORMANCE_DIR;
  if (fromEnv) return resolve(fromEnv);
  let dir = process.cwd();
  for (;;) {
    if (existsSync(join(dir, '.git')) || existsSync(join(dir, 'pnpm-workspace.yaml'))) {
      return join(dir, '.conformance');
    }
    const up = dirname(dir);
    if (up === dir) return join(process.cwd(), '.conformance');
    dir = up;
  }
}

export function jsonCapabilities(c: TransportCapabilities): unknown {
  const dedupe = c.brokerDedupe;
  return {
    ...c,
    brokerDedupe:
      dedupe === false
        ? false
        : { windowMs: Number.isFinite(dedupe.windowMs) ? dedupe.windowMs : 'Infinity' },
  };
}

/** Collects scenario outcomes for one suite and writes them once it ends. */
export interface Recorder {
  add(name: string, proves: readonly CapabilityName[]): ScenarioRecord;
  /** Runs `body`, marking the scenario passed or failed (rethrowing). */
  track(record: ScenarioRecord, body: () => Promise<void>): Promise<void>;
  write(): void;
}

export function createRecorder(options: {
  readonly kind: ConformanceRecord['kind'];
  readonly label: string;
  readonly name: string;
  readonly capabilities?: unknown;
  readonly dir: string | false;
}): Recorder {
  const scenarios: ScenarioRecord[] = [];
  return {
    add(name, proves) {
      const record: ScenarioRecord = { name, proves, status: 'not-run' };
      scenarios.push(record);
      return record;
    },
    async track(record, body) {
      try {
        await body();
        record.status = 'passed';
      } catch (err) {
        record.status = 'failed';
        throw err;
      }
    },
    write() {
      if (options.dir === false) return;
      const out: ConformanceRecord = {
        format: 1,
        kind: options.kind,
        label: options.label,
        name: options.name,
        capabilities: options.capabilities,
        scenarios,
        complete: scenarios.every((s) => s.status !== 'not-run'),
        recordedAt: new Date().toISOString(),
      };
      const file = `${options.kind}-${options.label.replace(/[^A-Za-z0-9._-]+/g, '_')}.json`;
      mkdirSync(options.dir, { recursive: true });
      writeFileSync(join(options.dir, file), `${JSON.stringify(out, null, 2)}\n`);
    },
  };
}
