import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  createRabbitMqTransport,
  defaultAmqpUrl,
  deleteRabbitMqQueues,
} from '@onceflow/adapter-rabbitmq';
import { createPostgresInbox, migrate } from '@onceflow/inbox-postgres';
import { createRedisInbox } from '@onceflow/inbox-redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTINGS } from '../src/config.js';
import { runCli } from '../src/run.js';
import {
  captureOutput,
  createDbFile,
  deadLetter,
  event,
  open,
  seed,
  tempDbPath,
  testWorker,
  waitFor,
} from './helpers.js';

/** A fresh folder, removed after the file's tests, with the given files written in it. */
function folder(files: Record<string, string | object> = {}): string {
  const dir = dirname(tempDbPath());
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    const text = typeof content === 'string' ? content : JSON.stringify(content);
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const run = async (cwd: string, argv: string[], env: Record<string, string> = {}) => {
  const io = captureOutput();
  const code = await runCli(argv, { output: io.output, env, cwd });
  return { code, ...io };
};

/** A folder holding an embedded file with two dead letters at `data/onceflow.db`. */
async function embeddedFolder(files: Record<string, string | object>): Promise<string> {
  const dir = folder(files);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const db = await createDbFile(join(dir, 'data', 'onceflow.db'));
  const embedded = await open(db);
  try {
    await deadLetter(embedded.records, [event('evt_1'), event('evt_2')]);
  } finally {
    await embedded.close();
  }
  return dir;
}

describe('the config file', () => {
  it('onceflow.config.json in the working directory names the store; no flags needed', async () => {
    const dir = await embeddedFolder({
      'onceflow.config.json': { store: 'embedded', embedded: { db: 'data/onceflow.db' } },
    });
    const { code, json } = await run(dir, ['dead-letters', 'list', '--json']);
    expect(code).toBe(0);
    expect(json()).toMatchObject({ total: 2 });
  });

  it('flags win over the environment, which wins over the file', async () => {
    const dir = await embeddedFolder({
      'onceflow.config.json': { embedded: { db: 'missing.db' }, defaults: { actor: 'cli:file' } },
    });
    const real = join(dir, 'data', 'onceflow.db');
    const fromFile = await run(dir, ['inbox', 'stats']);
    expect(fromFile.code).toBe(1);
    expect(fromFile.errText()).toContain(`no onceflow database at ${join(dir, 'missing.db')}`);
    const fromEnv = await run(dir, ['dead-letters', 'purge', '--all', '--json'], {
      ONCEFLOW_DB: real,
    });
    expect(fromEnv.json()).toMatchObject({ actor: 'cli:file', count: 2 });
    const fromFlag = await run(
      dir,
      ['dead-letters', 'purge', '--all', '--json', '--db', real, '--actor', 'cli:flag'],
      { ONCEFLOW_DB: join(dir, 'also-missing.db') },
    );
    expect(fromFlag.json()).toMatchObject({ actor: 'cli:flag', count: 2 });
  });

  it('defaults.actor and defaults.rate apply to redrive, purge and replay', async () => {
    const dir = await embeddedFolder({
      'onceflow.config.json': {
        embedded: { db: 'data/onceflow.db' },
        defaults: { actor: 'cli:night-shift', rate: 20 },
      },
    });
    const dry = await run(dir, ['dead-letters', 'redrive', '--all']);
    expect(dry.out[1]).toContain('recorded as redriven by cli:night-shift');
    expect(dry.text()).toContain('At --rate 20/s that takes about 100ms.');
    const purge = await run(dir, ['dead-letters', 'purge', 'stripe/evt_1', '--apply']);
    expect(purge.out[0]).toMatch(/^Purged 1 dead letter as cli:night-shift: /);
    const replay = await run(dir, ['replay', '--since', '1d', '--json']);
    expect(replay.json()).toMatchObject({ action: 'replay', rate: 20 });
  });

  it('--config and ONCEFLOW_CONFIG name a file elsewhere; .mjs and .ts export it as default', async () => {
    const dir = await embeddedFolder({
      'conf/ops.mjs': `export default { embedded: { db: '../data/onceflow.db' }, defaults: { actor: 'cli:mjs' } };`,
      'conf/ops.ts': `const config: { embedded: { db: string } } = { embedded: { db: '../data/onceflow.db' } };\nexport default config;`,
    });
    const mjs = await run(dir, [
      'dead-letters',
      'purge',
      '--all',
      '--json',
      '--config',
      'conf/ops.mjs',
    ]);
    expect(mjs.json()).toMatchObject({ actor: 'cli:mjs', count: 2 });
    const ts = await run(dir, ['dead-letters', 'list', '--json'], {
      ONCEFLOW_CONFIG: join(dir, 'conf/ops.ts'),
    });
    expect(ts.json()).toMatchObject({ total: 2 });
  });

  const refusals: [string, Record<string, string | object>, string[], RegExp][] = [
    [
      'a field of the wrong type, naming it',
      { 'onceflow.config.json': { postgres: { url: 5 } } },
      [],
      /onceflow\.config\.json \(.+\):\n {2}postgres\.url: Invalid input: expected string, received number/,
    ],
    [
      'a misspelt key',
      { 'onceflow.config.json': { postgress: { url: 'postgres://x' } } },
      [],
      /\(top level\): Unrecognized key: "postgress"/,
    ],
    [
      'a rate that is not positive, and an actor with a control character',
      { 'onceflow.config.json': { defaults: { rate: 0, actor: 'a\u0007b' } } },
      [],
      /defaults\.actor: no control characters\n {2}defaults\.rate: Too small/,
    ],
    ['a file that is not JSON', { 'onceflow.config.json': '{ store: ' }, [], /not valid JSON/],
    [
      'a store the CLI does not know',
      { 'onceflow.config.json': { store: 'nats' } },
      [],
      /onceflow\.config\.json: store: unknown store "nats" \(known: embedded, postgres, redis\)/,
    ],
    [
      'two config files',
      { 'onceflow.config.json': {}, 'onceflow.config.mjs': 'export default {};' },
      [],
      /onceflow\.config\.json and onceflow\.config\.mjs in .+: keep one, or name it with --config/,
    ],
    [
      'a --config that does not exist',
      {},
      ['--config', 'nope.json'],
      /--config: no file at .+nope\.json/,
    ],
    [
      'a module without a default export',
      { 'onceflow.config.mjs': 'export const store = "embedded";' },
      [],
      /no default export/,
    ],
  ];
  for (const [what, files, flags, message] of refusals) {
    it(`refuses ${what} with exit 2, touching nothing`, async () => {
      const dir = folder(files);
      const { code, out, errText } = await run(dir, ['dead-letters', 'list', ...flags]);
      expect(code).toBe(2);
      expect(out).toEqual([]);
      expect(errText()).toMatch(message);
    });
  }

  it('onceflow config: each setting and where it comes from, passwords masked', async () => {
    const dir = folder({
      'onceflow.config.json': {
        store: 'postgres',
        postgres: { url: 'postgres://ops:s3cret@db.internal:5432/app', schema: 'billing' },
        to: 'rabbitmq',
        defaults: { rate: 25 },
      },
    });
    const env = { ONCEFLOW_PG_SCHEMA: 'ledger', ONCEFLOW_AMQP_URL: 'amqp://u:pw@mq:5672' };
    const { code, json } = await run(dir, ['config', '--queue', 'billing-events', '--json'], env);
    expect(code).toBe(0);
    const body = json() as { configFile: string; settings: { setting: string }[] };
    expect(body.configFile).toBe(join(dir, 'onceflow.config.json'));
    const by = Object.fromEntries(body.settings.map((r) => [r.setting, r]));
    expect(by.store).toEqual({ setting: 'store', value: 'postgres', from: 'config file' });
    expect(by.queue).toMatchObject({ value: 'billing-events', from: '--queue' });
    expect(by['postgres.url']).toMatchObject({ value: 'postgres://ops:***@db.internal:5432/app' });
    expect(by['postgres.schema']).toMatchObject({
      value: 'ledger',
      from: 'env ONCEFLOW_PG_SCHEMA',
    });
    expect(by['rabbitmq.url']).toMatchObject({ value: 'amqp://u:***@mq:5672' });
    expect(by['defaults.rate']).toMatchObject({ value: '25', from: 'config file' });
    expect(by['embedded.db']).toMatchObject({ from: 'default' });
    expect(by['kafka.brokers']).toMatchObject({ value: null, from: 'unset' });
    expect(JSON.stringify(body)).not.toContain('s3cret');

    const text = await run(dir, ['config'], env);
    expect(text.out[0]).toBe(`config file: ${join(dir, 'onceflow.config.json')}`);
    expect(text.text()).toMatch(/^postgres\.schema\s+ledger\s+env ONCEFLOW_PG_SCHEMA$/m);
    expect(text.text()).not.toContain('kafka.brokers');
    const none = await run(folder(), ['config']);
    expect(none.out[0]).toMatch(/^config file: none \(looked for onceflow\.config\.json, /);
    expect(none.text()).toMatch(/^to\s+embedded\s+default$/m);
    const broken = await run(folder({ 'onceflow.config.json': { store: 7 } }), ['config']);
    expect(broken.code).toBe(2);
    expect(broken.errText()).toContain('store: Invalid input: expected string, received number');
  });

  it('config --schema prints the JSON Schema, beside a broken file; every field is a setting', async () => {
    const dir = folder({ 'onceflow.config.json': '{' });
    const { code, json } = await run(dir, ['config', '--schema']);
    expect(code).toBe(0);
    type Node = {
      properties?: Record<string, Node>;
      additionalProperties?: boolean;
      description?: string;
    };
    const schema = json() as Node;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties?.postgres?.additionalProperties).toBe(false);
    expect(schema.properties?.postgres?.properties?.url?.description).toContain('ONCEFLOW_PG_URL');
    const leaves = Object.entries(schema.properties ?? {}).flatMap(([key, node]) =>
      node.properties ? Object.keys(node.properties).map((k) => `${key}.${k}`) : [key],
    );
    expect(leaves.filter((l) => l !== '$schema').sort()).toEqual(
      SETTINGS.map((s) => s.field).sort(),
    );
  });

  it('--help and --version answer even beside a broken config file', async () => {
    const dir = folder({ 'onceflow.config.json': '{' });
    expect((await run(dir, ['--help'])).code).toBe(0);
    expect((await run(dir, ['replay', '--help'])).code).toBe(0);
    const version = await run(dir, ['--version', '--json']);
    expect(version.code).toBe(0);
    expect(version.json()).toMatchObject({ name: '@onceflow/cli' });
  });
});

describe('the config file with real stores', () => {
  const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const REDIS_URL = process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const schema = `cli_cfg_${randomBytes(4).toString('hex')}`;
  const prefix = `onceflow-cli-cfg-${randomBytes(4).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  const redis = new Redis(REDIS_URL);
  const redisStore = createRedisInbox({ redis, prefix });

  beforeAll(async () => {
    await migrate(pool, { schema });
    await deadLetter(createPostgresInbox({ pool, schema }), [event('evt_pg', { source: 'cfg' })]);
    await deadLetter(redisStore, [event('evt_redis', { source: 'cfg' })]);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
    const keys = await redis.keys(`${redisStore.keyBase}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('reaches PostgreSQL by the url, schema and table in the file', async () => {
    const dir = folder({
      'onceflow.config.json': {
        store: 'postgres',
        postgres: { url: PG_URL, schema, table: 'onceflow_inbox' },
      },
    });
    const { code, json } = await run(dir, ['dead-letters', 'list', '--source', 'cfg', '--json']);
    expect(code).toBe(0);
    expect(json()).toMatchObject({ total: 1, deadLetters: [{ id: 'evt_pg' }] });
  });

  it('reaches Redis by the url and prefix in the file; --store on the command line wins', async () => {
    const dir = folder({
      'onceflow.config.mjs': `export default ${JSON.stringify({
        store: 'postgres',
        postgres: { url: PG_URL, schema },
        redis: { url: REDIS_URL, prefix },
      })};`,
    });
    const { code, json } = await run(dir, [
      'events',
      'show',
      'cfg/evt_redis',
      '--store',
      'redis',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(json()).toMatchObject({ source: 'cfg', id: 'evt_redis', state: 'dead-lettered' });
    const pgRun = await run(dir, ['events', 'show', 'cfg/evt_redis', '--json']);
    expect(pgRun.code).toBe(3);
  });
});

describe('the config file with a real broker', () => {
  const url = process.env.ONCEFLOW_AMQP_URL ?? defaultAmqpUrl();
  const queue = `cli-cfg-${randomBytes(4).toString('hex')}`;
  const transport = createRabbitMqTransport({ url, queue });
  afterAll(async () => {
    await transport.close();
    await deleteRabbitMqQueues({ url, queue });
  });

  it('redrives and replays by id to the RabbitMQ queue the file names, at its rate', async () => {
    await transport.start();
    const dir = folder({
      'onceflow.config.json': {
        embedded: { db: 'onceflow.db' },
        to: 'rabbitmq',
        rabbitmq: { url },
        queue,
        defaults: { actor: 'cli:cfg', rate: 4 },
      },
    });
    const db = join(dir, 'onceflow.db');
    await seed(db, { completed: [event('evt_done', { source: 'cfg' })] });
    const embedded = await open(db);
    try {
      await deadLetter(embedded.records, [event('evt_poison', { source: 'cfg' })]);
      const redrive = await run(dir, ['dead-letters', 'redrive', '--all', '--apply']);
      expect(redrive.code, redrive.errText()).toBe(0);
      expect(redrive.out[0]).toBe(`Redrove 1 dead letter to RabbitMQ queue "${queue}" as cli:cfg.`);
      const dry = await run(dir, ['replay', 'cfg/evt_done', '--replay-id', 'c1']);
      expect(dry.out[1]).toContain(`published again to rabbitmq queue "${queue}"`);
      const replay = await run(dir, ['replay', 'cfg/evt_done', '--replay-id', 'c1', '--apply']);
      expect(replay.out[0]).toBe(
        `Replayed 1 completed event named by id as replay c1 to RabbitMQ queue "${queue}".`,
      );
      const worker = testWorker(transport, embedded.records);
      await worker.start();
      try {
        const state = async (id: string) => (await embedded.records.get('cfg', id))?.state;
        await waitFor(
          async () =>
            (await state('evt_poison')) === 'completed' &&
            (await state('evt_done#replay-c1')) === 'completed',
          'the redriven and the replayed copy completed',
          20_000,
        );
      } finally {
        await worker.close();
      }
      const history = (await embedded.records.get('cfg', 'evt_poison'))?.history ?? [];
      expect(history.find((h) => h.note === 'redriven')).toMatchObject({ actor: 'cli:cfg' });
    } finally {
      await embedded.close();
    }
  }, 60_000);
});
