#!/usr/bin/env node
// `pnpm brokers:up [kafka] [sqs]`, `pnpm brokers:down [...]`, `pnpm brokers:status`: the brokers this
// machine does not run as services, fetched from Maven Central with mvn, started on loopback.
// Binaries are cached in ONCEFLOW_BROKERS_CACHE (default ~/.cache/onceflow/brokers); pid files,
// logs and data live in ONCEFLOW_BROKERS_STATE (default <tmpdir>/onceflow-brokers).
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { elasticmq } from './brokers/elasticmq.mjs';
import { kafka } from './brokers/kafka.mjs';
import { runningPid, stop, withStartLock } from './brokers/process.mjs';

export const brokers = { kafka, sqs: elasticmq };

export const dirs = {
  cacheDir: process.env.ONCEFLOW_BROKERS_CACHE ?? join(homedir(), '.cache', 'onceflow', 'brokers'),
  stateDir: process.env.ONCEFLOW_BROKERS_STATE ?? join(tmpdir(), 'onceflow-brokers'),
};

/** Starts each named broker that is not already answering; returns the names it started. */
export async function up(names = Object.keys(brokers)) {
  const started = [];
  for (const name of names) {
    const broker = brokers[name];
    if (!broker)
      throw new Error(`unknown broker "${name}"; choose from: ${Object.keys(brokers).join(', ')}`);
    await withStartLock(dirs.stateDir, name, async () => {
      if (await broker.ready()) {
        console.log(`${name}: already running (${broker.address})`);
        return;
      }
      const t0 = Date.now();
      await broker.up(dirs);
      console.log(`${name}: up at ${broker.address} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      started.push(name);
    });
  }
  return started;
}

/** Stops each named broker that this script started. */
export async function down(names = Object.keys(brokers)) {
  for (const name of names) {
    const stopped = await stop(dirs.stateDir, brokers[name].process);
    console.log(`${name}: ${stopped ? 'stopped' : 'not running (from this script)'}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command = 'status', ...names] = process.argv.slice(2);
  const chosen = names.length ? names : undefined;
  try {
    if (command === 'up') await up(chosen);
    else if (command === 'down') await down(chosen);
    else if (command === 'status')
      for (const [name, b] of Object.entries(brokers))
        console.log(
          `${name}: ${(await b.ready()) ? 'ready' : 'down'} at ${b.address}` +
            (runningPid(dirs.stateDir, b.process)
              ? ` (pid ${runningPid(dirs.stateDir, b.process)})`
              : ''),
        );
    else
      throw new Error(`usage: brokers.mjs up|down|status [${Object.keys(brokers).join('|')} ...]`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
