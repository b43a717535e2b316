/**
 * `name=value` items of a signature header split on `separator` (`ts=1;h1=ab;h1=cd` with `;`):
 * every value per name, in order. Items without `=` or with an empty name are skipped.
 */
export function signatureParams(header: string, separator: string): Map<string, string[]> {
  const params = new Map<string, string[]>();
  for (const item of header.split(separator)) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    const name = item.slice(0, eq).trim();
    const values = params.get(name) ?? [];
    values.push(item.slice(eq + 1).trim());
    params.set(name, values);
  }
  return params;
}
