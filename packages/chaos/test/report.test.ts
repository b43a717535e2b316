import { describe, expect, it } from 'vitest';
import type { Summary } from '../src/checker.js';
import { withSweepSection } from '../src/report.js';

const summary = { stack: 'embedded', mode: 'helper', seed: 1000, events: 10 } as Summary;
const doc = [
  '# Reliability under faults',
  '',
  '## What was run',
  '',
  'earlier runs',
  '',
  '## The full sweep',
  '',
  'not run yet',
  '',
  '## Soak',
  '',
  'soak table',
  '',
].join('\n');

describe('withSweepSection', () => {
  it('replaces only the full sweep section and keeps what comes before and after it', () => {
    const out = withSweepSection(doc, [summary], 'pnpm chaos --full');
    expect(out).toContain('earlier runs');
    expect(out).toContain('## Soak\n\nsoak table');
    expect(out).not.toContain('not run yet');
    expect(out).toMatch(/## The full sweep\n\nWritten by `pnpm chaos --full` on .*; seeds 1000\./);
    expect(out).toContain('| embedded | helper | 1000 | 10 |');
    expect(out.indexOf('## The full sweep')).toBeLessThan(out.indexOf('## Soak'));
  });

  it('appends the section to a doc that has none', () => {
    const out = withSweepSection('# Reliability under faults\n', [summary], 'pnpm chaos --full');
    expect(out.startsWith('# Reliability under faults\n\n## The full sweep\n')).toBe(true);
  });
});
