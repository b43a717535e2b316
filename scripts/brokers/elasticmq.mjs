// ElasticMQ, an SQS-compatible server, fetched from Maven Central (org.elasticmq:elasticmq-server_3)
// and run in memory on 127.0.0.1:9324. It speaks the SQS JSON protocol that @aws-sdk/client-sqs v3
// uses (ElasticMQ >= 1.5). No queues are declared up front: the adapter creates its own.
// `startElasticMq` also starts independent instances on other ports (with `persist`, queues and
// messages kept in an H2 file that survives a SIGKILL) for the tests that kill and restart one.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetchMaven } from './maven.mjs';
import { runningPid, startDetached, stop, waitForPort } from './process.mjs';

const VERSION = '1.7.1';
const HOST = '127.0.0.1';
const PORT = 9324;
const address = `http://${HOST}:${PORT}`;

// H2 writes a commit to its file within WRITE_DELAY ms (default 500); 0 writes it before ElasticMQ
// answers, so a SIGKILL cannot take back a send it acknowledged.
const storage = (dataDir) =>
  dataDir
    ? `messages-storage {
  enabled = true
  uri = "jdbc:h2:${join(dataDir, 'elasticmq')};WRITE_DELAY=0"
}
`
    : `messages-storage {
  enabled = false
}
`;

// HOCON read by ElasticMQ's server; `include classpath(...)` keeps its defaults for the rest.
const config = ({ port, dataDir }) => `include classpath("application.conf")

node-address {
  protocol = http
  host = localhost
  port = ${port}
  context-path = ""
}
generate-node-address = false

rest-sqs {
  enabled = true
  bind-port = ${port}
  bind-hostname = "${HOST}"
  sqs-limits = strict
}

rest-stats {
  enabled = false
}

aws {
  region = us-east-1
  accountId = 000000000000
}

queues {}
${storage(dataDir)}`;

/** True when the server answers an SQS JSON-protocol request (what the AWS SDK v3 sends). */
async function ready(url = address) {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'AmazonSQS.ListQueues',
      },
      body: '{}',
      signal: AbortSignal.timeout(1000),
    });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Starts an ElasticMQ instance named `name` on `port`, its config under `<stateDir>/<name>`, and
 * resolves once it answers SQS requests. With `persist`, queues and messages live in an H2 file
 * in `<stateDir>/<name>-data` (kept across restarts), as ElasticMQ's `messages-storage` does.
 * Returns its pid. An instance already running under that name is reused.
 */
export async function startElasticMq({
  cacheDir,
  stateDir,
  name = 'elasticmq',
  port = PORT,
  persist = false,
  timeoutMs = 60_000,
}) {
  const url = `http://${HOST}:${port}`;
  const existing = runningPid(stateDir, name);
  if (existing !== undefined && (await ready(url))) return existing;
  const lib = fetchMaven({
    cacheDir,
    name: `elasticmq-${VERSION}`,
    artifacts: [{ groupId: 'org.elasticmq', artifactId: 'elasticmq-server_3', version: VERSION }],
  });
  const dir = join(stateDir, name);
  mkdirSync(dir, { recursive: true });
  const dataDir = persist ? join(stateDir, `${name}-data`) : undefined;
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const conf = join(dir, 'elasticmq.conf');
  writeFileSync(conf, config({ port, dataDir }));
  const pid = startDetached({
    stateDir,
    name,
    command: 'java',
    args: [
      '-Xms64m',
      '-Xmx384m',
      '-XX:+UseSerialGC',
      // Its log gives the time of day only: in UTC, the harness reads it (packages/chaos).
      '-Duser.timezone=UTC',
      `-Dconfig.file=${conf}`,
      '-cp',
      join(lib, '*'),
      'org.elasticmq.server.Main',
    ],
    cwd: dir,
  });
  await waitForPort({ stateDir, name, pid, host: HOST, port, timeoutMs });
  const deadline = Date.now() + 30_000;
  while (!(await ready(url))) {
    if (Date.now() > deadline)
      throw new Error(`${name} opened ${url} but does not answer SQS requests`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return pid;
}

/** Stops the instance started under `name` (`graceMs` 0: SIGKILL at once, a crash). */
export const stopElasticMq = ({ stateDir, name = 'elasticmq', graceMs }) =>
  stop(stateDir, name, graceMs);

export const elasticmq = {
  process: 'elasticmq',
  address,
  ready: () => ready(),
  up: (dirs) => startElasticMq({ ...dirs }).then(() => undefined),
};
