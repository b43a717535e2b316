import { describe, expect, it } from 'vitest';
import { serveDemoConsole } from '../src/console.js';
import { runDemo } from '../src/run.js';

// `pnpm demo --console`: the console over the demo's own data once the run is over.
describe('demo --console', () => {
  it("serves the run's events and its poison dead letters", async () => {
    const token = 'demo-console-test-token-0123';
    const seen: Record<string, string> = {};
    const summary = await runDemo({
      broker: 'embedded',
      events: 20,
      kill: false,
      log: () => {},
      afterRun: async (stores) => {
        const stop = new AbortController();
        const lines: string[] = [];
        const serving = serveDemoConsole(stores, {
          port: 0,
          log: (l) => lines.push(l),
          signal: stop.signal,
          token,
        });
        while (!lines.some((l) => l.includes('console: http')))
          await new Promise((r) => setTimeout(r, 20));
        const base = /http:\/\/[^ ]+\//.exec(lines.join('\n'))?.[0] ?? '';
        const get = async (path: string) =>
          (
            await fetch(`${base}${path.slice(1)}`, {
              headers: { authorization: `Bearer ${token}` },
            })
          ).text();
        seen.overview = await get('/');
        seen.deadLetters = await get('/dead-letters');
        seen.anonymous = String((await fetch(`${base}dead-letters`)).status);
        stop.abort();
        await serving;
      },
    });
    expect(summary.lost).toBe(0);
    expect(seen.anonymous).toBe('401');
    expect(seen.overview, seen.overview).toMatch(
      /data-state="dead-lettered">dead-lettered<b>3<\/b>/,
    );
    expect(seen.deadLetters).toContain('data-total="3"');
  }, 180_000);
});
