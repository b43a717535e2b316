import { type EventState, type RecordFilter, isEventState } from '@onceflow/core';

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30m`, `6h`, `2d` in ms; undefined for anything else. */
export function parseAge(text: string): number | undefined {
  const m = /^(\d{1,6})([mhd])$/.exec(text.trim());
  return m ? Number(m[1]) * (UNITS[m[2] as string] as number) : undefined;
}

export interface FormFilter {
  readonly filter: RecordFilter;
  /** The fields as given, to fill the form and to carry into links and confirm forms. */
  readonly fields: Readonly<Record<'source' | 'type' | 'reason' | 'state' | 'olderThan', string>>;
  /** A field that did not parse, named for the page. */
  readonly problem?: string | undefined;
}

/** The list filter of a query string or a form: source, type, reason, state, olderThan (age). */
export function readFilter(params: URLSearchParams, now = Date.now()): FormFilter {
  const get = (name: string) => (params.get(name) ?? '').trim();
  const fields = {
    source: get('source'),
    type: get('type'),
    reason: get('reason'),
    state: get('state'),
    olderThan: get('olderThan'),
  };
  let problem: string | undefined;
  let state: EventState | undefined;
  if (fields.state !== '') {
    if (isEventState(fields.state)) state = fields.state;
    else problem = `state: not a state (${fields.state})`;
  }
  let updatedBefore: Date | undefined;
  if (fields.olderThan !== '') {
    const age = parseAge(fields.olderThan);
    if (age === undefined) problem = 'older than: use minutes, hours or days, e.g. 30m, 6h, 2d';
    else updatedBefore = new Date(now - age);
  }
  const filter: RecordFilter = {
    ...(fields.source ? { source: fields.source } : {}),
    ...(fields.type ? { type: fields.type } : {}),
    ...(fields.reason ? { reason: fields.reason } : {}),
    ...(state ? { state } : {}),
    ...(updatedBefore ? { updatedBefore } : {}),
  };
  return { filter, fields, problem };
}

/** The filter's fields as a query string (for next-page links), empty fields left out. */
export function filterQuery(
  fields: FormFilter['fields'],
  extra: Record<string, string> = {},
): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...fields, ...extra })) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}
