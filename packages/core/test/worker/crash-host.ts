import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Delivery, Subscription } from '../../src/contracts/transport.js';
import { errorInfo } from '../../src/errors.js';
import { createMemoryStore, type MemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport, type MemoryTransport } from '../../src/memory/transport.js';
import type { FromWorker, RecordMethod, ToWorker } from './fixtures/crash-worker.js';

const script = fileURLToPath(new URL('./fixtures/crash-worker.ts', import.meta.url));

/**
 * When to SIGKILL a worker process, asked on each record-store call it makes (`n`: the how-manieth
 * call of `method`): `after` the store applied it (the write is committed, the worker never hears
 * back), `before` (the write never happens), or not at all.
 */
export type KillHook = (
  method: RecordMethod,
  args: readonly unknown[],
  n: number,
) => 'before' | 'after' | undefined;

export interface WorkerProcess {
  /** Resolves once the process has exited (its deliveries went back to the broker). */
  readonly exited: Promise<void>;
  /** The store call during which it was killed, if it was. */
  readonly killedOn: () => { method: RecordMethod; args: readonly unknown[] } | undefined;
  kill(): Promise<void>;
}

export interface CrashHost extends AsyncDisposable {
  /** The broker: a memory transport in this process. */
  readonly transport: MemoryTransport;
  /** The event record: a memory store in this process. */
  readonly store: MemoryStore;
  /** Every delivery's attempt per event id, in the order the broker handed them out. */
  readonly deliveries: Map<string, number[]>;
  /** A worker in a child process over this broker and store. */
  spawn(consumer: string, kill?: KillHook): Promise<WorkerProcess>;
  /** The workers' effects: each line the event id and the idempotency key it used. */
  ledger(): { id: string; key: string }[];
}

/**
 * A broker and a database that outlive their workers: the workers run in child processes
 * (`fixtures/crash-worker.ts`) and reach this process's memory transport and memory store over
 * IPC, so a worker can be SIGKILLed at an exact point of its conversation with the store. A
 * killed worker's unsettled delivery goes back to the queue (as a broker does when a consumer's
 * connection drops) with its attempt raised.
 */
export function createCrashHost(options: { lockMs: number }): CrashHost {
  const transport = createMemoryTransport({ lockMs: options.lockMs, queue: 'crash' });
  const store = createMemoryStore();
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-crash-'));
  const ledgerPath = join(dir, 'ledger');
  const deliveries = new Map<string, number[]>();
  const children: ChildProcess[] = [];

  async function spawn(consumer: string, kill?: KillHook): Promise<WorkerProcess> {
    const child = fork(script, [], {
      execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    child.on('error', () => {}); // a send to a process that just died
    let killing = false;
    const send = (message: ToWorker) => {
      if (!killing) child.send(message);
    };
    let killedOn: { method: RecordMethod; args: readonly unknown[] } | undefined;
    const nth = new Map<RecordMethod, number>();
    let subscription: Subscription | undefined;
    let dids = 0;
    const pending = new Map<number, { delivery: Delivery; done: () => void }>();

    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => {
        killing = true;
        const closing = subscription?.close(); // detaches at once: nothing more goes to it
        for (const p of pending.values()) p.done(); // returned unsettled: back to the queue
        pending.clear();
        void Promise.resolve(closing).then(() => resolve());
      });
    });

    const forward = async (delivery: Delivery) => {
      if (killing) return;
      const { id } = delivery.envelope;
      deliveries.set(id, [...(deliveries.get(id) ?? []), delivery.attempt]);
      const did = ++dids;
      await new Promise<void>((done) => {
        pending.set(did, { delivery, done });
        send({ t: 'deliver', did, envelope: delivery.envelope, attempt: delivery.attempt });
      });
    };

    const reply = async (callId: number, run: () => Promise<unknown>) => {
      try {
        send({ t: 'reply', call: callId, value: await run() });
      } catch (err) {
        const { code, message } = errorInfo(err);
        send({ t: 'reply', call: callId, error: { code, message } });
      }
    };

    const ready = new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`worker process exited early (${code})`)));
      child.on('message', (message: FromWorker) => {
        if (killing) return;
        switch (message.t) {
          case 'ready':
            return resolve();
          case 'consume':
            void transport.consume(forward, { concurrency: message.concurrency }).then((sub) => {
              subscription = sub;
            });
            return;
          case 'settle': {
            const p = pending.get(message.did);
            void reply(message.call, async () => {
              if (p === undefined) return;
              try {
                if (message.kind === 'ack') await p.delivery.ack();
                else
                  await p.delivery.retry({ delayMs: message.delayMs ?? 0, error: message.error });
              } finally {
                pending.delete(message.did);
                p.done();
              }
            });
            return;
          }
          case 'store': {
            const { method, args } = message;
            const n = (nth.get(method) ?? 0) + 1;
            nth.set(method, n);
            const when = kill?.(method, args, n);
            const die = () => {
              killing = true;
              killedOn = { method, args };
              child.kill('SIGKILL');
            };
            if (when === 'before') return die();
            const apply = store[method] as (...a: unknown[]) => Promise<unknown>;
            if (when === 'after') {
              void apply.apply(store, args).finally(die);
              return;
            }
            void reply(message.call, () => apply.apply(store, args));
            return;
          }
        }
      });
    });
    const init = new Promise<void>((resolve) => child.once('spawn', () => resolve()));
    await init;
    send({ t: 'init', capabilities: transport.capabilities, ledger: ledgerPath, consumer });
    await ready;
    return {
      exited,
      killedOn: () => killedOn,
      async kill() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      },
    };
  }

  return {
    transport,
    store,
    deliveries,
    spawn,
    ledger() {
      let text = '';
      try {
        text = readFileSync(ledgerPath, 'utf8');
      } catch {
        return [];
      }
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const [id = '', key = ''] = line.split(' ');
          return { id, key };
        });
    },
    async [Symbol.asyncDispose]() {
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      await transport.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
