// Runs the README's Quick start (compiled to quickstart.js) as a user would, with `fulfil` and
// STRIPE_WEBHOOK_SECRET provided, and checks it end to end: a signed Stripe delivery is answered 202
// and reaches the handler, the same delivery again is answered 200, and the handler ran once.
import { spawn } from 'node:child_process';
import net from 'node:net';
import {
  assertEqual,
  deliver,
  freePort,
  paymentSucceeded,
  stripeSecret,
  waitFor,
} from './deliver.mjs';

const port = await freePort();
const child = spawn(process.execPath, ['--import', './fulfil.mjs', 'quickstart.js'], {
  env: { ...process.env, PORT: String(port), STRIPE_WEBHOOK_SECRET: stripeSecret },
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
});
let output = '';
child.stdout.on('data', (d) => (output += d));
child.stderr.on('data', (d) => (output += d));
const calls = [];
child.on('message', (m) => calls.push(m));
let exited;
const exit = new Promise((resolve) =>
  child.on('exit', (code, signal) => {
    exited = { code, signal };
    resolve();
  }),
);

const listening = () =>
  new Promise((resolve) => {
    if (exited)
      throw new Error(`the Quick start exited (${exited.code ?? exited.signal}) before listening`);
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

try {
  await waitFor(`the Quick start to listen on port ${port}`, listening);
  const id = `evt_packed_install_${Date.now()}`; // new to onceflow.db, even in a kept project
  const event = paymentSucceeded(id, 4200);
  assertEqual(await deliver(port, event), 202, 'the answer to a new delivery');
  await waitFor('the handler to run', () => calls.length > 0);
  assertEqual(calls[0].fulfilled.id, `pi_${id}`, 'the payment the handler got');
  assertEqual(calls[0].fulfilled.amount, 4200, 'its amount');
  assertEqual(await deliver(port, event), 200, 'the answer to the same delivery again');
  // A duplicate is answered 200 without a publish; give a wrong second delivery time to show.
  await new Promise((r) => setTimeout(r, 500));
  assertEqual(calls.length, 1, 'handler runs for one event delivered twice');
  console.log('Quick start: 202, handler ran once, duplicate answered 200');
} catch (err) {
  console.error(`Quick start output:\n${output}`);
  throw err;
} finally {
  if (!exited) child.kill('SIGTERM');
  await exit;
}
