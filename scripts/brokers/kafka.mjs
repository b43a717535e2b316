// Apache Kafka in KRaft mode, single node (broker + controller), on loopback: fetched from Maven
// Central with mvn (org.apache.kafka:kafka_2.13 and a log4j2 backend), formatted with a random
// cluster id, started detached. `startKafka` also starts independent instances on other ports for
// the tests that stop or kill a broker.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { reachable } from '../services.mjs';
import { fetchMaven } from './maven.mjs';
import { alive, logFile, runningPid, startDetached, stop, waitForPort } from './process.mjs';

/** The broker release; see packages/adapter-kafka/README.md for why this one. */
export const KAFKA_VERSION = process.env.ONCEFLOW_KAFKA_VERSION ?? '4.4.0';
const LOG4J_VERSION = '2.24.3';

const artifacts = () => [
  { groupId: 'org.apache.kafka', artifactId: 'kafka_2.13', version: KAFKA_VERSION },
  // kafka's pom resolves slf4j-api 1.7; the log4j2 binding needs 2.x
  { groupId: 'org.slf4j', artifactId: 'slf4j-api', version: '2.0.17' },
  { groupId: 'org.apache.logging.log4j', artifactId: 'log4j-core', version: LOG4J_VERSION },
  { groupId: 'org.apache.logging.log4j', artifactId: 'log4j-slf4j2-impl', version: LOG4J_VERSION },
];

const log4j2 = `status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.out.ref = out
logger.kafka.name = kafka.server.KafkaRaftServer
logger.kafka.level = info
`;

const serverProperties = ({ port, controllerPort, dataDir }) => `process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${controllerPort}
listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}
advertised.listeners=PLAINTEXT://127.0.0.1:${port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=${dataDir}
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
auto.create.topics.enable=true
log.segment.bytes=16777216
log.retention.check.interval.ms=10000
log.segment.delete.delay.ms=1000
`;

/**
 * A new cluster id as Kafka's own tool makes one: 16 random bytes in base64url, drawn again while
 * it starts with `-`, which the storage tool's argument parser reads as an option (1 in 64).
 */
export function kafkaClusterId(random = () => randomBytes(16)) {
  for (;;) {
    const id = random().toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/**
 * Starts a Kafka instance named `name` on `port` (controller on `controllerPort`), its data under
 * `<stateDir>/<name>-data` (kept across restarts unless `fresh`), and resolves when producers and
 * consumer groups work. Returns its pid. An instance already running under that name is reused.
 */
export async function startKafka({
  cacheDir,
  stateDir,
  name = 'kafka',
  port = 9092,
  controllerPort = port + 1,
  fresh = false,
  timeoutMs = 120_000,
}) {
  const existing = runningPid(stateDir, name);
  if (existing !== undefined && (await reachable('127.0.0.1', port, 500))) return existing;
  const lib = fetchMaven({ cacheDir, name: `kafka-${KAFKA_VERSION}`, artifacts: artifacts() });
  const dir = join(stateDir, `${name}-config`);
  const dataDir = join(stateDir, `${name}-data`);
  mkdirSync(dir, { recursive: true });
  if (fresh) rmSync(dataDir, { recursive: true, force: true });
  const props = join(dir, 'server.properties');
  writeFileSync(props, serverProperties({ port, controllerPort, dataDir }));
  writeFileSync(join(dir, 'log4j2.properties'), log4j2);
  const jvm = [
    '-Xms128m',
    '-Xmx512m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${join(dir, 'log4j2.properties')}`,
    '-cp',
    `${lib}/*`,
  ];
  if (!existsSync(join(dataDir, 'meta.properties'))) {
    const clusterId = kafkaClusterId();
    const r = spawnSync(
      'java',
      [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', props],
      { encoding: 'utf8' },
    );
    if (r.status !== 0)
      throw new Error(`kafka storage format failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  }
  const pid = startDetached({
    stateDir,
    name,
    command: 'java',
    args: [...jvm, 'kafka.Kafka', props],
  });
  await waitForPort({ stateDir, name, pid, port, timeoutMs });
  await waitForGroups({ stateDir, name, pid, port, timeoutMs });
  return pid;
}

/** Stops the instance started under `name`. */
export const stopKafka = ({ stateDir, name = 'kafka', graceMs }) => stop(stateDir, name, graceMs);

/**
 * Resolves once a group coordinator answers (the offsets topic exists), using the adapter's
 * kafkajs; the port being open is not enough for consumer groups.
 */
async function waitForGroups({ stateDir, name, pid, port, timeoutMs }) {
  const require = createRequire(
    new URL('../../packages/adapter-kafka/package.json', import.meta.url),
  );
  let Kafka;
  try {
    ({ Kafka } = require('kafkajs'));
  } catch {
    return; // dependencies not installed yet: the open port is all we can check
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // a fresh client per try: one whose connect failed does not recover
    const admin = new Kafka({
      clientId: 'onceflow-brokers',
      brokers: [`127.0.0.1:${port}`],
      logLevel: 0,
      retry: { retries: 2, initialRetryTime: 200 },
    }).admin();
    try {
      await admin.connect();
      await admin.describeGroups(['onceflow-ready']);
      await admin.disconnect();
      return;
    } catch (err) {
      await admin.disconnect().catch(() => {});
      if (!alive(pid)) throw new Error(`${name} exited; see ${logFile(stateDir, name)}`);
      if (Date.now() > deadline)
        throw new Error(`${name}: consumer groups not ready in ${timeoutMs} ms: ${err}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export const kafka = {
  process: 'kafka',
  address: '127.0.0.1:9092',
  ready: () => reachable('127.0.0.1', 9092, 1000),
  up: (dirs) => startKafka({ ...dirs }).then(() => undefined),
};
