/**
 * BullMQ job ids from dedupe keys. BullMQ refuses a custom `jobId` that contains `:` (unless it
 * has exactly two, its own repeat-job shape) or that reads as an integer, and the default dedupe
 * key is `<source>:<id>`. So `%` and `:` are percent-escaped (`%25`, `%3A`), and a key that would
 * still read as an integer gets the prefix `%N`, which escaping never produces. Injective, so two
 * keys never share a job id, and reversible (`dedupeKeyOfJobId`).
 *
 * @example
 * jobIdOf('stripe:evt_1'); // 'stripe%3Aevt_1'
 */
export function jobIdOf(dedupeKey: string): string {
  const escaped = dedupeKey.replaceAll('%', '%25').replaceAll(':', '%3A');
  return `${Number.parseInt(escaped, 10)}` === escaped ? `%N${escaped}` : escaped;
}

/** The dedupe key a job id was made from (see `jobIdOf`). */
export function dedupeKeyOfJobId(jobId: string): string {
  const body = jobId.startsWith('%N') ? jobId.slice(2) : jobId;
  return body.replaceAll('%3A', ':').replaceAll('%25', '%');
}
