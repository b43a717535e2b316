/**
 * Aligned plain-text columns, headers in capitals, no borders, so the output stays greppable.
 * Cells longer than `maxCell` are cut with `…`.
 */
export function table(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  maxCell = 60,
): string[] {
  const cut = (cell: string) => (cell.length > maxCell ? `${cell.slice(0, maxCell - 1)}…` : cell);
  const cells = [headers, ...rows].map((row) => row.map((c) => cut(c.replace(/\s+/g, ' '))));
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) =>
    row
      .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** Key/value lines with aligned values (`show` and `stats`). */
export function keyValues(pairs: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width + 1)}  ${v}`);
}

/** A duration for people: `850ms`, `42s`, `3m 12s`, `5h 4m`, `2d 3h`. */
export function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m}m` : `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h}h` : `${h}h ${m % 60}m`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d}d` : `${d}d ${h % 24}h`;
}

/** `1 dead letter`, `3 dead letters`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
