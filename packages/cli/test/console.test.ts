import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { captureOutput, createDbFile, deadLetter, drain, event, open, waitFor } from './helpers.js';

const TOKEN = 'cli-console-token-0123456789';

/** Starts `onceflow console …` on a free port; resolves with its URL, its exit, and a stop. */
async function startConsole(argv: string[], env: Record<string, string>, cwd?: string) {
  const io = captureOutput();
  const controller = new AbortController();
  const exit = runCli(['console', '--port', '0', '--json', ...argv], {
    output: io.output,
    env,
    cwd,
    signal: controller.signal,
  });
  const url = await waitFor(
    () => io.out.length > 0 && (io.json().url as string),
    'the console to listen',
    15_000,
  );
  return { url, exit, io, stop: () => controller.abort() };
}

describe('onceflow console', () => {
  it('refuses to start without a token of 16 characters or more (exit 2)', async () => {
    const db = await createDbFile();
    const io = captureOutput();
    const code = await runCli(['console', '--db', db], {
      output: io.output,
      env: { ONCEFLOW_CONSOLE_TOKEN: 'short' },
    });
    expect(code).toBe(2);
    expect(io.errText()).toContain('ONCEFLOW_CONSOLE_TOKEN');
  });

  it('serves the embedded record read-only: 401 without the token, 200 with it, 403 for an action', async () => {
    const db = await createDbFile();
    const embedded = await open(db);
    await deadLetter(embedded.records, [event('evt_cli_poison')]);
    await embedded.close();
    const ops = await startConsole(['--db', db], { ONCEFLOW_CONSOLE_TOKEN: TOKEN });
    try {
      expect(ops.io.json()).toMatchObject({ mode: 'read-only' });
      expect((await fetch(`${ops.url}dead-letters`)).status).toBe(401);
      const page = await fetch(`${ops.url}dead-letters`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('evt_cli_poison');
      const action = await fetch(`${ops.url}dead-letters/purge`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: new URLSearchParams({ ids: 'stripe/evt_cli_poison', apply: '1' }),
      });
      expect(action.status).toBe(403);
    } finally {
      ops.stop();
    }
    expect(await ops.exit).toBe(0);
  });

  it('with --write and the config file, redrives a dead letter to the embedded queue', async () => {
    const db = await createDbFile();
    const embedded = await open(db);
    await deadLetter(embedded.records, [event('evt_cli_redrive')]);
    await embedded.close();
    // The config file's console section: base path and write access.
    const cwd = dirname(db);
    writeFileSync(
      join(cwd, 'onceflow.config.json'),
      JSON.stringify({ console: { basePath: '/ops', write: true } }),
    );
    const env = { ONCEFLOW_CONSOLE_TOKEN: TOKEN };
    const ops = await startConsole(['--db', db, '--to', 'embedded', '--queue', 'events'], env, cwd);
    try {
      expect(ops.url).toMatch(/\/ops\/$/);
      expect(ops.io.json()).toMatchObject({ mode: 'write' });
      const auth = { authorization: `Bearer ${TOKEN}` };
      const list = await (await fetch(`${ops.url}dead-letters`, { headers: auth })).text();
      const csrf = /name="_csrf" value="([^"]+)"/.exec(list)?.[1] ?? '';
      const form = new URLSearchParams({ _csrf: csrf, ids: 'stripe/evt_cli_redrive', apply: '1' });
      const done = await (
        await fetch(`${ops.url}dead-letters/redrive`, { method: 'POST', headers: auth, body: form })
      ).text();
      expect(done).toContain('data-done="1"');
    } finally {
      ops.stop();
    }
    expect(await ops.exit).toBe(0);
    const [copy] = await drain(db, 1);
    expect(copy?.envelope.id).toBe('evt_cli_redrive');
    const check = await open(db);
    const record = await check.records.get('stripe', 'evt_cli_redrive');
    await check.close();
    expect(record?.history.at(-1)).toMatchObject({ actor: 'console:cli' });
  });
});
