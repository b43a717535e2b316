import { describe, expect, it } from 'vitest';
import { TransportUnavailableError } from '../../src/index.js';
import { publishDeadline, withDeadline } from '../../src/kit.js';

const never = () => new Promise<never>(() => {});
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

describe('withDeadline', () => {
  it('rejects with TransportUnavailableError once the deadline passes and aborts the call’s signal', async () => {
    let signal: AbortSignal | undefined;
    const err = await failure(
      withDeadline('mybroker publish', 20, (s) => {
        signal = s;
        return never();
      }),
    );
    expect(err).toBeInstanceOf(TransportUnavailableError);
    expect((err as Error).message).toBe('mybroker publish: no answer from the broker within 20 ms');
    await new Promise((resolve) => setImmediate(resolve));
    expect(signal?.aborted).toBe(true);
  });

  it('times out a call that declares no parameter too, giving it a signal that never aborts', async () => {
    let given: unknown;
    const call = (...args: unknown[]) => {
      given = args[0];
      return never();
    };
    expect(call.length).toBe(0);
    const err = await failure(withDeadline('mybroker publish', 20, call));
    expect(err).toBeInstanceOf(TransportUnavailableError);
    await new Promise((resolve) => setImmediate(resolve));
    expect(given).toBeInstanceOf(AbortSignal);
    expect((given as AbortSignal).aborted).toBe(false);
  });

  it('passes the call’s own result and error through', async () => {
    await expect(withDeadline('x', 1_000, async () => 7)).resolves.toBe(7);
    await expect(
      withDeadline('x', 1_000, async () => {
        throw new RangeError('no');
      }),
    ).rejects.toThrow(RangeError);
  });
});

describe('publishDeadline', () => {
  const setUp = () => {
    let clock = 1_000_000;
    const deadline = publishDeadline({
      name: 'mybroker publish',
      timeoutMs: 20,
      now: () => clock,
      probeBackoff: { baseDelayMs: 1_000, maxDelayMs: 1_000, random: () => 0.999 },
    });
    return { deadline, advance: (ms: number) => (clock += ms) };
  };

  it('after a publish timed out, fails at once without calling the broker until the probe wait is over', async () => {
    const { deadline, advance } = setUp();
    expect(await failure(deadline.run(never))).toBeInstanceOf(TransportUnavailableError);
    expect(deadline.down).toBe(true);
    let calls = 0;
    const call = async () => {
      calls++;
    };
    const fast = await failure(deadline.run(call));
    expect(fast).toBeInstanceOf(TransportUnavailableError);
    expect((fast as Error).message).toMatch(/unreachable .* failing fast until a probe succeeds/);
    expect(calls).toBe(0);

    advance(1_000);
    await deadline.run(call); // the probe reaches the broker, which answers
    expect(calls).toBe(1);
    expect(deadline.down).toBe(false);
    await deadline.run(call);
    expect(calls).toBe(2);
  });

  it('lets one probe through at a time; a failed probe waits again', async () => {
    const { deadline, advance } = setUp();
    await failure(deadline.run(never));
    advance(1_000);
    let calls = 0;
    const probe = deadline.run(async () => {
      calls++;
      throw new TransportUnavailableError('connection refused');
    });
    expect(await failure(deadline.run(async () => void calls++))).toBeInstanceOf(
      TransportUnavailableError,
    );
    await failure(probe);
    expect(calls).toBe(1);
    expect(deadline.down).toBe(true);
    expect(await failure(deadline.run(async () => void calls++))).toBeInstanceOf(
      TransportUnavailableError,
    );
    expect(calls).toBe(1);
  });

  it('a refusal that is not an outage leaves the broker up', async () => {
    const deadline = publishDeadline({
      name: 'mybroker publish',
      timeoutMs: 1_000,
      isOutage: (err) => !(err instanceof RangeError),
    });
    await failure(
      deadline.run(async () => {
        throw new RangeError('message too large');
      }),
    );
    expect(deadline.down).toBe(false);
    await failure(
      deadline.run(async () => {
        throw new TransportUnavailableError('connection refused');
      }),
    );
    expect(deadline.down).toBe(true);
  });
});
