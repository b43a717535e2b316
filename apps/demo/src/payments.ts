import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A simulated downstream payment API that honours `Idempotency-Key` the way Stripe does: the first
 * request with a key makes a charge and stores the response; a later request with the same key
 * gets the stored response back and makes no charge. It also fails the first call for some keys
 * (HTTP 500) so retries really happen.
 */
export interface PaymentsApi {
  readonly url: string;
  /** Charges actually made, per event id. */
  chargesByEvent(): ReadonlyMap<string, number>;
  readonly requests: () => number;
  close(): Promise<void>;
}

interface ChargeRequest {
  eventId: string;
  amount: number;
  customer: string;
}

export async function startPaymentsApi(
  options: { failFirstEvery?: number } = {},
): Promise<PaymentsApi> {
  const failEvery = options.failFirstEvery ?? 7;
  const responses = new Map<string, string>();
  const seenKeys = new Set<string>();
  const charges = new Map<string, number>();
  let requests = 0;
  let n = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const key = req.headers['idempotency-key'];
      if (typeof key !== 'string' || key.length === 0) {
        res.writeHead(400).end('{"error":"Idempotency-Key required"}');
        return;
      }
      const stored = responses.get(key);
      if (stored) {
        res
          .writeHead(200, { 'content-type': 'application/json', 'idempotent-replayed': 'true' })
          .end(stored);
        return;
      }
      // A transient failure on the first sight of some keys: the caller must retry with the same key.
      if (!seenKeys.has(key) && ++n % failEvery === 0) {
        seenKeys.add(key);
        res.writeHead(500).end('{"error":"try again"}');
        return;
      }
      seenKeys.add(key);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChargeRequest;
      charges.set(body.eventId, (charges.get(body.eventId) ?? 0) + 1);
      const response = JSON.stringify({
        id: `ch_${responses.size + 1}`,
        amount: body.amount,
        customer: body.customer,
      });
      responses.set(key, response);
      res.writeHead(200, { 'content-type': 'application/json' }).end(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    chargesByEvent: () => charges,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
