/**
 * The benchmark kit for adapter benches: timing, interleaved rounds, the comparison table with
 * ratios against the raw client, and the worker consume path. Prints; never fails on a time.
 */
export { type Measured, interleaved, measure } from './measure.js';
export { type Comparison, printComparisons, printCosts } from './report.js';
export {
  BENCH_EVENT_TYPE,
  benchEnvelopes,
  consumeWithWorker,
  publishAll,
  rawRecordGuard,
} from './workload.js';
