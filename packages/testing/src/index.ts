/**
 * `@onceflow/testing`: run your handlers through the real worker over a simulated broker and
 * record store on a virtual clock, with faults injected by seed, and check that their effects
 * happen once (`checkEffectivelyOnce`).
 */

// Simulation: the real worker over a simulated broker and store, on virtual time
export {
  type SimEvent,
  type SimStore,
  type SimulationOptions,
  type SimulationResult,
  runSimulation,
} from './simulation.js';
export {
  type CrashPoint,
  type Fault,
  type FaultKind,
  FAULT_KINDS,
  describeFault,
} from './faults.js';
export { type TimelineStep, formatTimeline } from './timeline.js';

// The property test: generated histories, your invariant, the smallest failing timeline
export {
  type CheckOptions,
  type HandlersFor,
  type Invariant,
  type InvariantAnswer,
  checkEffectivelyOnce,
} from './check.js';
export { type History, type HistoryShape, historyArbitrary, sampleHistory } from './history.js';
export { EffectivelyOnceViolation, isEffectivelyOnceViolation } from './violation.js';
