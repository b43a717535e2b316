// The services the tests need, how to reach them, and a reachability check.
// Each entry names the service, its loopback address (overridable by env) and how to start it.
import net from 'node:net';

export const services = {
  postgres: {
    url: process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    hint: 'start PostgreSQL (e.g. pg_ctlcluster <version> main start) or set ONCEFLOW_PG_URL',
  },
};

/** Resolves true when a TCP connection to host:port opens within timeoutMs. */
export function reachable(host, port, timeoutMs = 2000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Returns the names of the services that cannot be reached, each with its hint. */
export async function missingServices(names = Object.keys(services)) {
  const missing = [];
  for (const name of names) {
    const { url, hint } = services[name];
    const u = new URL(url);
    const port =
      Number(u.port) ||
      { 'postgres:': 5432, 'redis:': 6379, 'amqp:': 5672, 'http:': 80 }[u.protocol];
    if (!(await reachable(u.hostname, port)))
      missing.push(`${name} at ${u.hostname}:${port}: ${hint}`);
  }
  return missing;
}
