import type { HandlerMiddleware } from '@onceflow/core';
import { describeFault } from './faults.js';
import type { DeliveryRegistry } from './sim-delivery.js';

/** What a simulated crash throws inside the worker: nothing of it is recorded (the process is gone). */
export class SimulatedCrash extends Error {
  override name = 'SimulatedCrash';
}

const messageOf = (err: unknown) =>
  err instanceof Error
    ? `${(err as { code?: unknown }).code ?? err.name}: ${err.message}`
    : String(err);

/**
 * The simulation's step around the user's handler, outermost in the worker's middleware: it
 * applies the delivery's planned fault (a crash before or after the handler, a pause at a lock
 * expiry, a transient failure) and notes on the timeline whether the handler ran or threw.
 */
export function faultStep(registry: DeliveryRegistry): HandlerMiddleware {
  return (next) => async (ctx) => {
    const sim = registry.byEnvelope(ctx.envelope);
    if (sim === undefined) return next(ctx);
    const fault = sim.fault;
    if (fault?.kind === 'crash' && fault.point === 'before-handler') {
      sim.crashed = true;
      sim.line.note(describeFault(fault));
      throw new SimulatedCrash('simulated crash before the handler');
    }
    if (fault?.kind === 'fail') {
      sim.line.note(describeFault(fault));
      throw new Error('simulated transient failure');
    }
    if (fault?.kind === 'lock-expiry' && fault.point === 'before-handler') await sim.pauseHere();
    try {
      await next(ctx);
    } catch (err) {
      sim.line.note(`handler threw ${messageOf(err)}`);
      throw err;
    }
    sim.line.note('handler ran');
    if (fault?.kind === 'lock-expiry' && fault.point === 'after-handler') await sim.pauseHere();
    if (fault?.kind === 'crash' && fault.point === 'after-effect') {
      sim.crashed = true;
      sim.line.note(describeFault(fault));
    }
  };
}
