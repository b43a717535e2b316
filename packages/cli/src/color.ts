import type { Env } from './target.js';

/** What a piece of text means, so each stream can show it in a colour or not at all. */
export type Tone = 'warn' | 'ok' | 'error' | 'heading' | 'dim';

const SGR: Readonly<Record<Tone, readonly [open: number, close: number]>> = {
  warn: [33, 39],
  ok: [32, 39],
  error: [31, 39],
  heading: [1, 22],
  dim: [2, 22],
};

/**
 * Whether a stream gets colour: `FORCE_COLOR` set and not `0`/`false` forces it on (as Node's own
 * `tty` does, it wins over `NO_COLOR`); a non-empty `NO_COLOR` turns it off; otherwise only a
 * TTY whose `TERM` is not `dumb` gets colour, so pipes, files and CI logs get plain text.
 *
 * @example
 * colorFor(process.stdout, process.env); // false under `onceflow … | jq`
 */
export function colorFor(stream: { readonly isTTY?: boolean | undefined }, env: Env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** `text` in the tone's ANSI colour when `enabled`, else `text` unchanged. */
export function paint(enabled: boolean | undefined, tone: Tone, text: string): string {
  if (!enabled || text === '') return text;
  const [open, close] = SGR[tone];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}
