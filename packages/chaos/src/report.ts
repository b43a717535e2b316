import type { Summary } from './checker.js';

/** The results table of a sweep, as docs/reliability.md holds it. */
export function reliabilityTable(summaries: readonly Summary[]): string {
  const head =
    '| stack | handler | seed | events | accepted | processed | lost | doubled | unexpected | redelivery | p50 ms | p99 ms | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|';
  const rows = summaries.map(
    (s) =>
      `| ${s.stack} | ${s.mode} | ${s.seed} | ${s.events} | ${s.accepted} | ${s.processed} | ${s.lost} | ${s.doubled} | ${s.unexpected} | ${(s.redeliveryRate * 100).toFixed(1)}% | ${s.p50Ms} | ${s.p99Ms} | ${s.failed ? 'FAILED' : 'ok'} |`,
  );
  return [head, ...rows].join('\n');
}

export function reliabilityDoc(summaries: readonly Summary[], command: string): string {
  return `# Reliability under faults\n\nWritten by \`${command}\` on ${new Date().toISOString().slice(0, 10)}.\n\n${reliabilityTable(summaries)}\n`;
}
