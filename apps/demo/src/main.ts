/**
 * `pnpm demo [--broker <name>] [--events <n>] [--no-kill] [--json] [--console [--console-port <n>]]`
 *
 * Sends signed Stripe and GitHub deliveries (duplicates, concurrent retries, out of order, forged
 * and poison ones) through the receiver to a worker that is killed mid-batch, then prints what
 * happened. Exits 1 unless lost = 0, outboundLost = 0, doubled = 0 and every poison event was
 * dead-lettered. With `--console`, the operator console then serves the run's events until Ctrl-C.
 */
import { parseArgs } from 'node:util';
import { serveDemoConsole } from './console.js';
import { runDemo } from './run.js';
import type { Summary } from './summary.js';
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
    console: { type: 'boolean', default: false },
    'console-port': { type: 'string', default: '8088' },
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

const consolePort = Number(values['console-port']);
if (!Number.isInteger(consolePort) || consolePort < 0 || consolePort > 65535) {
  console.error('--console-port must be 0 to 65535');
  process.exit(2);
}
const summary = await runDemo({
  broker: values.broker,
  events,
  kill: !values['no-kill'],
  log,
  afterRun: values.console
    ? async ({ records, inbox, transport, summary }) => {
        printSummary(summary);
        await serveDemoConsole(
          { records, inbox, transport },
          { port: consolePort, log: console.log },
        );
      }
    : undefined,
});
/** The demo's verdict: every event accepted, nothing lost (inbound or outbound), nothing doubled, every poison event dead-lettered. */
function okOf(summary: Summary): boolean {
  return (
    summary.notAccepted === 0 &&
    summary.lost === 0 &&
    summary.outboundLost === 0 &&
    summary.doubled === 0 &&
    summary.poisonNotDeadLettered === 0
  );
}

function printSummary(summary: Summary): void {
  if (values.json) {
    console.log(JSON.stringify(summary));
    return;
  }
  console.log('');
  console.log('summary');
  for (const [k, v] of Object.entries(summary))
    console.log(`  ${k.padEnd(22)} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  console.log(
    okOf(summary)
      ? '\nOK: nothing lost, nothing doubled.'
      : '\nFAILED: see notAccepted / lost / outboundLost / doubled / poisonNotDeadLettered above.',
  );
}
if (!values.console) printSummary(summary);
process.exit(okOf(summary) ? 0 : 1);
