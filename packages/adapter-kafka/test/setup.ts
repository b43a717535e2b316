import net from 'node:net';
import { brokers } from './brokers.js';

/** Fails the run at once, naming the broker, when Kafka does not answer. */
export default async function setup(): Promise<void> {
  const [host = '127.0.0.1', port = '9092'] = (brokers[0] ?? '').split(':');
  const ok = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (v: boolean) => {
      socket.destroy();
      resolve(v);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
  if (!ok)
    throw new Error(
      `Kafka is not reachable at ${host}:${port}: run \`pnpm brokers:up kafka\` or set ONCEFLOW_KAFKA_BROKERS`,
    );
}
