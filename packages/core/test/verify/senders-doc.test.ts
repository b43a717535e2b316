import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SenderPreset } from '../../src/contracts/source.js';
import { presets } from '../../src/verify/index.js';
import { cloudEventsPreset } from '../../src/cloudevents/source.js';

// docs/senders.md's table is generated from the presets themselves: this test fails when it is
// stale; `pnpm docs:senders` rewrites it.
const doc = new URL('../../../../docs/senders.md', import.meta.url);
const BEGIN = '<!-- senders:begin (generated from the presets: pnpm docs:senders) -->';
const END = '<!-- senders:end -->';

const duration = (ms: number): string =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000} d` : `${ms / 3_600_000} h`;
const cell = (text: string): string => text.replaceAll('|', '\\|');

function table(all: readonly SenderPreset[]): string {
  const rows = [...all]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((p) =>
      [
        `\`${p.name}\``,
        cell(p.scheme),
        p.toleranceSec === null ? 'none' : `${p.toleranceSec} s`,
        `${p.eventId.from} \`${cell(p.eventId.field)}\``,
        cell(p.handshake ?? '—'),
        duration(p.retryHorizonMs),
        cell(p.retryPolicy),
      ].join(' | '),
    );
  return [
    '| preset | scheme | timestamp tolerance | event id | handshake | retry horizon | how the sender retries |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

describe('docs/senders.md', () => {
  it('lists every preset with its horizon and id field, as the code states them', () => {
    const text = readFileSync(doc, 'utf8');
    const start = text.indexOf(BEGIN);
    const end = text.indexOf(END);
    expect(start, `docs/senders.md needs the ${BEGIN} marker`).toBeGreaterThanOrEqual(0);
    const fresh = `${text.slice(0, start + BEGIN.length)}\n${table([...Object.values(presets), cloudEventsPreset])}\n${text.slice(end)}`;
    if (process.env.ONCEFLOW_UPDATE_DOCS === '1') writeFileSync(doc, fresh);
    else expect(text, 'docs/senders.md is stale: run pnpm docs:senders').toBe(fresh);
  });
});
