/**
 * What is wrong with bytes `JSON.parse` refused, without quoting them: V8's messages quote the
 * start of the input (`Unexpected token 'c', "card=42424"... is not valid JSON`), and these
 * reasons end up in dead letters and log lines, which must never carry payload bytes.
 */
export function jsonSyntaxProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  const at = /at position (\d+)/.exec(message);
  if (at) return `syntax error at position ${at[1]}`;
  if (/end of JSON input/i.test(message)) return 'unexpected end of input';
  return 'syntax error';
}
