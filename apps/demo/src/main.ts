/**
 * `pnpm demo [--broker <name>] [--events <n>] [--no-kill] [--json]`
 *
 * Sends signed Stripe and GitHub deliveries (duplicates, concurrent retries, out of order, forged
 * and poison ones) through the receiver to a worker that is killed mid-batch, then prints what
 * happened. Exits 1 unless lost = 0, outboundLost = 0, doubled = 0 and every poison event was
 * dead-lettered.
 */
import { parseArgs } from 'node:util';
import { runDemo } from './run.js';
import { brokers } from './stack.js';

// `pnpm demo -- --json` and `pnpm demo --json` both reach here; drop the separator pnpm passes on.
const args = process.argv.slice(2).filter((a) => a !== '--');
const { values } = parseArgs({
  args,
  options: {
    broker: { type: 'string', default: 'embedded' },
    events: { type: 'string', default: '400' },
    'no-kill': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

const events = Number(values.events);
if (!Number.isInteger(events) || events < 1) {
  console.error('--events must be a positive integer');
  process.exit(2);
}
if (!brokers.includes(values.broker)) {
  console.error(`unknown broker "${values.broker}"; choose one of: ${brokers.join(', ')}`);
  process.exit(2);
}

const log = (line: string) => {
  if (!values.json) console.log(line);
};

const summary = await runDemo({ broker: values.broker, events, kill: !values['no-kill'], log });
const ok =
  summary.lost === 0 &&
  summary.outboundLost === 0 &&
  summary.doubled === 0 &&
  summary.poisonNotDeadLettered === 0;
if (values.json) {
  console.log(JSON.stringify(summary));
} else {
  console.log('');
  console.log('summary');
  for (const [k, v] of Object.entries(summary)) console.log(`  ${k.padEnd(22)} ${v}`);
  console.log(
    ok
      ? '\nOK: nothing lost, nothing doubled.'
      : '\nFAILED: see lost / outboundLost / doubled / poisonNotDeadLettered above.',
  );
}
process.exit(ok ? 0 : 1);
