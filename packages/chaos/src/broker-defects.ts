/**
 * Where the harness's own broker broke its own guarantee, read from the broker's log: a broker
 * that acknowledges a message and then drops it loses events no client can keep, and the checker
 * counts the events lost after that moment as the broker's, not onceflow's.
 *
 * Known today: ElasticMQ 1.7.1 with `messages-storage` (H2). A message's delivery receipts are a
 * mutable buffer that its queue actor appends to on a receive while the persistence actor may be
 * serializing the same message; the persistence actor then fails (`requirement failed` in
 * spray-json, from `DBMessage.from`), Pekko restarts it with an empty map of queues, and from then
 * on it acknowledges every send, update and delete without writing it, until the server restarts.
 * What was sent meanwhile is gone at the next crash.
 */

/** One moment the broker stopped keeping what it acknowledged. */
export interface BrokerDefect {
  /** ms since the epoch. */
  readonly at: number;
  /** Plain words, with the broker's own log line. */
  readonly what: string;
}

const ENTRY = /^(\d{2}):(\d{2}):(\d{2})\.(\d{3}) \[[^\]]*\] ERROR (.*)$/;
const PERSISTENCE_ACTOR = 'org.elasticmq.persistence.sql.SqlQueuePersistenceActor';

/**
 * The entries of an ElasticMQ log that mean its SQL persistence actor failed (an ERROR whose stack
 * trace runs through `SqlQueuePersistenceActor`). ElasticMQ logs the time of day only (the JVM's
 * time zone, UTC here): each is taken as the latest such moment at or before `now`.
 *
 * @example
 * elasticMqDefects(readFileSync(log, 'utf8'), Date.now()); // [{ at, what: "ElasticMQ's persistence actor failed at 17:14:08.614 UTC (…)…" }]
 */
export function elasticMqDefects(log: string, now: number): BrokerDefect[] {
  const lines = log.split('\n');
  const out: BrokerDefect[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = ENTRY.exec(lines[i] ?? '');
    if (!m) continue;
    let j = i + 1;
    let inPersistence = false;
    let cause = '';
    for (; j < lines.length && !/^\d{2}:\d{2}:/.test(lines[j] ?? ''); j++) {
      const line = lines[j] ?? '';
      if (cause === '' && line.trim() !== '' && !line.startsWith('\t')) cause = line.trim();
      if (line.includes(PERSISTENCE_ACTOR)) inPersistence = true;
    }
    if (inPersistence)
      out.push({
        at: timeOfDay(now, Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])),
        what: `ElasticMQ's persistence actor failed at ${m[1]}:${m[2]}:${m[3]}.${m[4]} UTC (${cause || m[5]}): it acknowledges sends without writing them until it restarts`,
      });
    i = j - 1;
  }
  return out;
}

const DAY_MS = 24 * 3600 * 1000;

function timeOfDay(now: number, h: number, min: number, s: number, ms: number): number {
  const day = new Date(now);
  const at = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), h, min, s, ms);
  return at > now ? at - DAY_MS : at;
}

/**
 * A reader of a growing log: each call returns the defects logged since the previous call (the
 * first call skips what was there before), so each run sees only its own.
 */
export function defectsSince(
  read: () => string,
  parse: (log: string, now: number) => BrokerDefect[],
): () => BrokerDefect[] {
  let seen = -1;
  return () => {
    const text = read();
    const from = seen < 0 || seen > text.length ? text.length : seen;
    seen = text.length;
    return parse(text.slice(from), Date.now());
  };
}
