/**
 * How long the dead-letters page takes to render its first page over 10k dead letters (aim:
 * under 300 ms), and one event's page, on the embedded store: the console's Fetch handler called
 * directly, so the figure is the store's paged, indexed list and count plus the rendering.
 * Median and worst of `BENCH_ROUNDS` (default 20) with the load average; prints, never fails.
 * `pnpm bench` (root or here). Env: BENCH_DEAD_LETTERS (default 10000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnvelope } from '@onceflow/core';
import { createEmbedded } from '@onceflow/embedded';
import { createConsole } from '../src/index.js';

const COUNT = Number(process.env.BENCH_DEAD_LETTERS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const TOKEN = 'bench-console-token-0123456789';

const dir = mkdtempSync(join(tmpdir(), 'onceflow-console-bench-'));
const embedded = createEmbedded({ path: join(dir, 'onceflow.db') });
await embedded.start();
const t0 = performance.now();
for (let i = 0; i < COUNT; i++) {
  const envelope = createEnvelope({
    source: i % 3 === 0 ? 'github' : 'stripe',
    id: `evt_${i}`,
    type: i % 2 === 0 ? 'charge.failed' : 'invoice.paid',
    payload: { i, note: 'x'.repeat(200) },
  });
  await embedded.records.deadLetter(envelope, undefined, {
    reason: i % 5 === 0 ? 'schema: amount must be a number' : 'attempts exhausted',
    attempts: 3,
    actor: 'bench',
  });
}
const seeded = performance.now() - t0;

const ops = createConsole({ records: embedded.records, auth: { token: TOKEN }, write: true });
const headers = { authorization: `Bearer ${TOKEN}` };

async function time(path: string): Promise<{ median: number; worst: number }> {
  const ms: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    const res = await ops.fetch(new Request(`http://console.local${path}`, { headers }));
    await res.text();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)] as number, worst: ms.at(-1) as number };
}

const rows = [
  ['dead letters, first page (50 of all)', await time('/dead-letters')],
  ['dead letters, filtered by reason', await time('/dead-letters?reason=schema')],
  [
    'dead letters, filtered by source + type',
    await time('/dead-letters?source=github&type=charge.failed'),
  ],
  ['one event', await time('/events/stripe/evt_4243')],
  ['overview (counts per state)', await time('/')],
] as const;

console.log(
  `\nConsole pages over ${COUNT} dead letters (embedded SQLite, seeded in ${Math.round(seeded)} ms), ${ROUNDS} rounds, load average ${loadavg()[0]?.toFixed(2)}`,
);
console.log(`${'page'.padEnd(42)} ${'median'.padStart(9)} ${'worst'.padStart(9)}  aim`);
for (const [name, { median, worst }] of rows) {
  const verdict = name.startsWith('dead letters, first page')
    ? `< 300 ms ${median < 300 ? 'met' : 'NOT met'}`
    : '';
  console.log(
    `${name.padEnd(42)} ${`${median.toFixed(1)} ms`.padStart(9)} ${`${worst.toFixed(1)} ms`.padStart(9)}  ${verdict}`,
  );
}
await embedded.close();
rmSync(dir, { recursive: true, force: true });
