import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  TransportUnavailableError,
  createWorker,
  defineHandler,
} from '../../src/index.js';
import { createMemoryStore, createMemoryTransport } from '../../src/testing.js';
import { untilAvailable } from '../../src/worker/wait-for-broker.js';

const recordingLogger = () => {
  const lines: { level: string; msg: string }[] = [];
  const at =
    (level: string) =>
    (_fields: unknown, msg?: string): void =>
      void lines.push({ level, msg: msg ?? '' });
  const logger = {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: () => logger,
  };
  return { logger, lines };
};

const backoff = { baseDelayMs: 1, maxDelayMs: 5 };

describe('untilAvailable', () => {
  it('tries again while the broker is unavailable, warning once, and tells when it started', async () => {
    const { logger, lines } = recordingLogger();
    let tries = 0;
    const started = await untilAvailable(
      async () => {
        if (++tries < 4) throw new TransportUnavailableError('connection refused');
      },
      { what: 'worker', logger, signal: new AbortController().signal, backoff },
    );
    expect(started).toBe(true);
    expect(tries).toBe(4);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(lines.map((l) => l.msg)).toEqual([
      'worker: the broker is unavailable; retrying with backoff until it answers',
      'worker: the broker answers again; started',
    ]);
  });

  it('rejects at once on any other error', async () => {
    const { logger } = recordingLogger();
    let tries = 0;
    const attempt = async () => {
      tries++;
      throw new ConfigError('queue declared with other arguments');
    };
    await expect(
      untilAvailable(attempt, { what: 'worker', logger, signal: new AbortController().signal }),
    ).rejects.toBeInstanceOf(ConfigError);
    expect(tries).toBe(1);
  });

  it('ends the wait when its signal aborts (close during start-up)', async () => {
    const { logger } = recordingLogger();
    const stop = new AbortController();
    const waiting = untilAvailable(
      async () => {
        throw new TransportUnavailableError('connection refused');
      },
      {
        what: 'worker',
        logger,
        signal: stop.signal,
        backoff: { baseDelayMs: 60_000, maxDelayMs: 60_000 },
      },
    );
    setTimeout(() => stop.abort(), 20);
    await expect(waiting).resolves.toBe(false);
  });
});

describe('a worker over a transport closed before it started', () => {
  it('rejects instead of waiting for it', async () => {
    const transport = createMemoryTransport();
    await transport.close();
    const handlers = [defineHandler({ type: 'x', handle: async () => {} })];
    const worker = createWorker({ transport, records: createMemoryStore(), handlers });
    await expect(worker.start()).rejects.toBeInstanceOf(TransportUnavailableError);
    await worker.close();
  });
});
