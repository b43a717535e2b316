import type {
  HandlerContext,
  Inbox,
  OutboxEvent,
  OutboxStore,
  RecordStore,
  Transport,
} from '@onceflow/core';

/**
 * The demo's side-effect ledger. Its table has NO unique constraint on the event id, so a double
 * would show as two rows; `record` writes the row and the processed mark (under the handler's
 * processing lease, from its `ctx`) in one transaction, which is what makes it effectively-once;
 * an `outbound` event is added to the stack's outbox in that same transaction.
 */
export interface Ledger {
  record(
    ctx: HandlerContext,
    entry: { amount: number | null; chargeId: string; outbound?: OutboxEvent | undefined },
  ): Promise<void>;
  /** Ledger rows per event id. */
  rowsByEvent(): Promise<Map<string, number>>;
}

/** Everything one broker choice gives the demo. */
export interface Stack {
  readonly broker: string;
  readonly inbox: Inbox;
  /** The event record: the worker's guard, its outcomes and dead letters; the summary reads it. */
  readonly records: RecordStore;
  readonly transport: Transport;
  readonly ledger: Ledger;
  /** The outbox beside the ledger: the worker process's dispatcher publishes it on `transport`. */
  readonly outbox: OutboxStore;
  close(): Promise<void>;
}

export interface StackOptions {
  /** Working directory for files (the embedded database). */
  readonly dir: string;
  /** A run id, used to keep queues and tables of separate runs apart. */
  readonly runId: string;
  /**
   * True for the demo's main process: its `close` removes what the run created on shared servers
   * (queues, topics, the PostgreSQL schema). Worker processes leave them alone.
   */
  readonly owner?: boolean;
}

export type StackFactory = (options: StackOptions) => Promise<Stack>;

const factories: Record<string, () => Promise<StackFactory>> = {
  embedded: async () => (await import('./stacks/embedded.js')).embeddedStack,
  bullmq: async () => (await import('./stacks/bullmq.js')).bullmqStack,
  kafka: async () => (await import('./stacks/kafka.js')).kafkaStack,
  rabbitmq: async () => (await import('./stacks/rabbitmq.js')).rabbitmqStack,
  sqs: async () => (await import('./stacks/sqs.js')).sqsStack,
};

export const brokers = Object.keys(factories);

/** Opens the stack for `broker`; throws with the list of known brokers for any other name. */
export async function openStack(broker: string, options: StackOptions): Promise<Stack> {
  const load = factories[broker];
  if (!load) throw new Error(`unknown broker "${broker}"; choose one of: ${brokers.join(', ')}`);
  return (await load())(options);
}
