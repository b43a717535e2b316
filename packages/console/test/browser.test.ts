import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POISON_ID, SCRIPT_PAYLOAD, TOKEN, startFixture, waitFor } from './fixture.js';
import type { StackName } from './stacks.js';

const STACKS: StackName[] = ['embedded', 'postgres+rabbitmq'];

/** Debian's chromium; ONCEFLOW_CHROMIUM_PATH points elsewhere. CI installs the package (see .ci/run). */
const executablePath = process.env.ONCEFLOW_CHROMIUM_PATH ?? '/usr/bin/chromium';
/** ONCEFLOW_CONSOLE_SCREENSHOTS=1 writes each page's screenshot for the README. */
const shots =
  process.env.ONCEFLOW_CONSOLE_SCREENSHOTS === '1'
    ? join(import.meta.dirname, '..', 'docs')
    : undefined;

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  if (shots) mkdirSync(shots, { recursive: true });
}, 60_000);
afterAll(async () => browser?.close());

async function signIn(page: Page, base: string, mount: string) {
  await page.goto(`${base}${mount}/`);
  await page.getByLabel('Token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

const shoot = async (page: Page, name: string) => {
  if (shots) await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
};

describe.each(STACKS)('the console in headless Chromium, over %s', (stack) => {
  it('finds an event, shows its attempts, renders a script payload as text, and redrives a dead letter that is then processed once', async () => {
    await using fx = await startFixture({}, stack);
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await signIn(page, fx.base, '/console');
    expect(await page.locator('[data-state="completed"] b').textContent()).toBe('10');
    expect(await page.locator('[data-state="dead-lettered"] b').textContent()).toBe('1');
    if (stack === 'embedded') await shoot(page, 'overview');

    // Search finds the event; its timeline shows both failed attempts.
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByLabel('Source').fill('shop');
    await page.getByLabel('Event id').fill(POISON_ID);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('[data-event-id]').waitFor();
    expect(await page.locator('[data-event-id]').textContent()).toBe(POISON_ID);
    const timeline = await page.locator('[data-timeline] tbody tr').allTextContents();
    expect(timeline.filter((row) => row.includes('processing')).length).toBe(2);
    expect(timeline.at(-1)).toContain('dead-lettered');
    // The payload is data: its markup is text on the page and never ran.
    expect(await page.locator('[data-payload]').textContent()).toContain(
      SCRIPT_PAYLOAD.replaceAll('"', '\\"'),
    );
    expect(
      await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned),
    ).toBeUndefined();
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(await page.locator('[data-headers]').textContent()).toContain('[redacted]');
    if (stack === 'embedded') await shoot(page, 'event');

    // Dead letters: tick it, redrive, see the dry run's count, confirm, watch it finish.
    await page.getByRole('link', { name: 'Dead letters' }).click();
    await page.getByLabel(`select ${POISON_ID}`).check();
    if (stack === 'embedded') await shoot(page, 'dead-letters');
    await page.locator('[data-action="redrive-selected"]').click();
    expect(await page.locator('[data-dry-run]').getAttribute('data-dry-run')).toBe('1');
    expect((await fx.records.get('shop', POISON_ID))?.state).toBe('dead-lettered');
    if (stack === 'embedded') await shoot(page, 'redrive-preview');
    const before = fx.runs.get(POISON_ID) ?? 0;
    fx.healPoison();
    await page.locator('[data-confirm]').click();
    await page.locator('[data-done]').waitFor();
    expect(await page.locator('[data-done]').getAttribute('data-done')).toBe('1');
    await waitFor(
      async () => (await fx.records.get('shop', POISON_ID))?.state === 'completed',
      'the redriven order completed',
    );
    expect((fx.runs.get(POISON_ID) ?? 0) - before).toBe(1);
    const record = await fx.records.get('shop', POISON_ID);
    expect(
      record?.history.some((h) => h.actor === 'console:alice' || h.note?.includes('console:alice')),
    ).toBe(true);
    expect(dialogs).toEqual([]);
    await page.close();
  }, 120_000);

  it('a read-only console offers no action and refuses one forged from the page', async () => {
    await using fx = await startFixture({}, stack);
    const page = await browser.newPage();
    await signIn(page, fx.base, '/ro');
    await page.goto(`${fx.base}/ro/dead-letters`);
    expect(await page.locator('.notice').textContent()).toContain('Read-only');
    expect(await page.locator('[data-action]').count()).toBe(0);
    // The page's own CSP forbids fetch (connect-src 'none'), so forge the POST from the browser
    // context instead: same session cookie, no CSRF token.
    const forged = await page.context().request.post(`${fx.base}/ro/dead-letters/purge`, {
      form: { ids: `shop/${POISON_ID}`, apply: '1' },
    });
    const status = forged.status();
    const blocked = await page.evaluate(async () => {
      try {
        await fetch('/ro/dead-letters/purge', { method: 'POST' });
        return false;
      } catch {
        return true;
      }
    });
    expect(blocked).toBe(true);
    expect(status).toBe(403);
    expect((await fx.records.get('shop', POISON_ID))?.state).toBe('dead-lettered');
    await page.close();
  }, 120_000);
});
