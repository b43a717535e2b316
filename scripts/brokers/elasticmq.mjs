// ElasticMQ, an SQS-compatible server, fetched from Maven Central (org.elasticmq:elasticmq-server_3)
// and run in memory on 127.0.0.1:9324. It speaks the SQS JSON protocol that @aws-sdk/client-sqs v3
// uses (ElasticMQ >= 1.5). No queues are declared up front: the adapter creates its own.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetchMaven } from './maven.mjs';
import { startDetached, waitForPort } from './process.mjs';

const VERSION = '1.7.1';
const HOST = '127.0.0.1';
const PORT = 9324;
const address = `http://${HOST}:${PORT}`;

// HOCON read by ElasticMQ's server; `include classpath(...)` keeps its defaults for the rest.
const config = `include classpath("application.conf")

node-address {
  protocol = http
  host = localhost
  port = ${PORT}
  context-path = ""
}
generate-node-address = false

rest-sqs {
  enabled = true
  bind-port = ${PORT}
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
messages-storage {
  enabled = false
}
`;

/** True when the server answers an SQS JSON-protocol request (what the AWS SDK v3 sends). */
async function ready() {
  try {
    const res = await fetch(address, {
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

async function up({ cacheDir, stateDir }) {
  const lib = fetchMaven({
    cacheDir,
    name: `elasticmq-${VERSION}`,
    artifacts: [{ groupId: 'org.elasticmq', artifactId: 'elasticmq-server_3', version: VERSION }],
  });
  const dir = join(stateDir, 'elasticmq');
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'elasticmq.conf');
  writeFileSync(conf, config);
  const pid = startDetached({
    stateDir,
    name: 'elasticmq',
    command: 'java',
    args: [
      '-Xms64m',
      '-Xmx384m',
      '-XX:+UseSerialGC',
      `-Dconfig.file=${conf}`,
      '-cp',
      join(lib, '*'),
      'org.elasticmq.server.Main',
    ],
    cwd: dir,
  });
  await waitForPort({
    stateDir,
    name: 'elasticmq',
    pid,
    host: HOST,
    port: PORT,
    timeoutMs: 60_000,
  });
  const deadline = Date.now() + 30_000;
  while (!(await ready())) {
    if (Date.now() > deadline)
      throw new Error(`elasticmq opened ${address} but does not answer SQS requests`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const elasticmq = { process: 'elasticmq', address, ready, up };
