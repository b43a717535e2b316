import { hasHealthCheck } from '../contracts/health-check.js';
import { ConfigError } from '../errors.js';
import type { Receiver } from '../receiver/index.js';
import type { Worker } from '../worker/worker.js';
import { type Check, runChecks } from './checks.js';
import { type ProbeHandler, probeHandler } from './handler.js';

export interface ProbesOptions {
  /**
   * Readiness check `store`: the inbox or event record answers its `check` (`HealthCheck`); a
   * store without one counts as reachable.
   */
  readonly store?: object | undefined;
  /** Readiness check `transport`: the broker answers the transport's `check`, likewise. */
  readonly transport?: object | undefined;
  /** Readiness check `receiver`: fails once the receiver is draining. */
  readonly receiver?: Pick<Receiver, 'draining'> | undefined;
  /**
   * Readiness check `worker`: the worker is consuming (subscribed). Liveness check `worker`: no
   * running delivery is stalled (renewed neither lease nor lock for longer than the lock).
   */
  readonly worker?: Pick<Worker, 'status'> | undefined;
  /** Readiness checks of your own, by name: resolve when ready, reject with the reason. */
  readonly checks?: Readonly<Record<string, Check>> | undefined;
  /**
   * Each check's time limit, in ms; the checks run at once. Default 800, below Kubernetes'
   * default probe `timeoutSeconds` of 1, so a slow dependency is reported rather than timed out.
   */
  readonly timeoutMs?: number | undefined;
}

/** Liveness (`/healthz`: restart me when failing) and readiness (`/readyz`: route me traffic). */
export interface Probes {
  readonly live: ProbeHandler;
  readonly ready: ProbeHandler;
}

/** The event loop turns within the time limit (a probe answered at all shows it did). */
const eventLoop: Check = () => new Promise((resolve) => setImmediate(resolve));

const reachable =
  (dependency: object): Check =>
  (signal) =>
    hasHealthCheck(dependency) ? dependency.check(signal) : Promise.resolve();

/**
 * Probes as ready handlers; each answers JSON `{ status, checks: { <name>: { status, durationMs,
 * error? } } }` with 200 when every check passed, else 503. Liveness: `event-loop` and, with a
 * worker, `worker` (nothing stalled). Readiness: `store`, `transport`, `receiver`, `worker` and
 * your `checks`, for what you pass. No I/O until a probe is asked.
 *
 * @example
 * const probes = createProbes({ store: inbox, transport, receiver, worker });
 * http.createServer((req, res) => {
 *   if (req.url === '/healthz') return probes.live.node(req, res);
 *   if (req.url === '/readyz') return probes.ready.node(req, res);
 *   receiver.nodeHandler()(req, res);
 * });
 */
export function createProbes(options: ProbesOptions): Probes {
  const timeoutMs = options.timeoutMs ?? 800;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    throw new ConfigError('invalid probes config: timeoutMs must be a positive integer');
  const { store, transport, receiver, worker } = options;

  const live: Record<string, Check> = { 'event-loop': eventLoop };
  const ready: Record<string, Check> = {};
  if (store) ready.store = reachable(store);
  if (transport) ready.transport = reachable(transport);
  if (receiver) {
    ready.receiver = async () => {
      if (receiver.draining) throw new Error('draining: not accepting webhooks');
    };
  }
  if (worker) {
    ready.worker = async () => {
      const { state } = worker.status();
      if (state !== 'consuming') throw new Error(`worker is ${state}, not consuming`);
    };
    live.worker = async () => {
      const { stalled, inFlight } = worker.status();
      if (stalled > 0)
        throw new Error(
          `${stalled} of ${inFlight} deliveries stalled (no renewal within the lock)`,
        );
    };
  }
  Object.assign(ready, options.checks);

  return {
    live: probeHandler(() => runChecks(live, timeoutMs)),
    ready: probeHandler(() => runChecks(ready, timeoutMs)),
  };
}
