/**
 * Profiles one bench server alone: starts it under `node --cpu-prof`, drives it for a warm-up and
 * a measured stretch, and prints its CPU per request and the top self time per request.
 *
 *   tsx bench/profile-server.ts 'receiver via hono' [seconds] [out-dir]
 */
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { runLoad } from './load.js';
import { signedEvent } from './stripe-event.js';

const kind = process.argv[2] ?? 'receiver';
const seconds = Number(process.argv[3] ?? 4);
const dir = process.argv[4] ?? `/tmp/re-prof/${kind.replace(/\W+/g, '_')}`;
const event = signedEvent;
const child = fork(new URL('./servers.ts', import.meta.url), [kind], {
  execArgv: [...process.execArgv, '--cpu-prof', `--cpu-prof-dir=${dir}`],
});
const port = await new Promise<number>((r) =>
  child.once('message', (m) => r((m as { port: number }).port)),
);
const cpu = () =>
  new Promise<number>((r) => {
    child.once('message', (m) => r((m as { cpuUs: number }).cpuUs));
    child.send('cpu');
  });
const url = `http://127.0.0.1:${port}`;
const warm = await runLoad({
  url,
  connections: 16,
  requests: 1e7,
  durationMs: 1500,
  request: (i) => event('w', i),
});
const before = await cpu();
const load = await runLoad({
  url,
  connections: 16,
  requests: 1e7,
  durationMs: seconds * 1000,
  request: (i) => event('m', i),
});
const used = (await cpu()) - before;
child.disconnect();
await new Promise((r) => child.once('exit', r));
// The main thread's profile is the largest (tsx's loader thread writes one too).
const file = readdirSync(dir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .map((f) => ({ f, size: readFileSync(`${dir}/${f}`).length }))
  .sort((a, b) => b.size - a.size)[0]!.f;
const prof = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
};
const self = new Map<number, number>();
for (const [i, id] of prof.samples.entries()) {
  self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
}
const byName = new Map<string, number>();
let busy = 0;
for (const n of prof.nodes) {
  const t = self.get(n.id) ?? 0;
  if (n.callFrame.functionName === '(idle)' || n.callFrame.functionName === '(program)') continue;
  busy += t;
  const where = n.callFrame.url.replace(/^.*\/(node_modules\/)?/, '');
  const key = `${n.callFrame.functionName || '(anon)'} ${where}:${n.callFrame.lineNumber + 1}`;
  byName.set(key, (byName.get(key) ?? 0) + t);
}
const total = warm.requests + load.requests;
console.log(
  `${kind}: ${load.rps.toFixed(0)} req/s, ${(used / load.requests).toFixed(1)} µs CPU/req (load ${loadavg()[0]!.toFixed(1)}); profile busy ${(busy / total).toFixed(1)} µs/req over all requests`,
);
for (const [k, t] of [...byName]
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(process.env.TOP ?? 25))) {
  console.log(
    `${((100 * t) / busy).toFixed(1).padStart(5)} %  ${(t / total).toFixed(2).padStart(6)} µs  ${k}`,
  );
}
