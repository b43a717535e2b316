import { connect, type Socket } from 'node:net';

/**
 * One keep-alive HTTP/1.1 connection that writes raw requests and reads only each answer's status
 * and framing: a load generator built on it costs the machine far less than node's http client,
 * so on a small machine the server, not the generator, sets the pace. Bench code only: one
 * request at a time, Content-Length or chunked answers.
 */
export interface LoadRequest {
  readonly method?: string | undefined;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly body?: string | Uint8Array | undefined;
}

export interface RawConnection {
  exchange(bytes: Buffer): Promise<{ status: number; close: boolean }>;
  close(): void;
}

export function encodeRequest(host: string, req: LoadRequest): Buffer {
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body);
  let head = `${req.method ?? 'POST'} ${req.path} HTTP/1.1\r\nhost: ${host}\r\ncontent-length: ${body.length}\r\n`;
  for (const [k, v] of Object.entries(req.headers ?? {})) head += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]);
}

/** One complete answer at the start of `buf`, or undefined while more bytes are needed. */
function parseAnswer(buf: Buffer): { status: number; close: boolean; length: number } | undefined {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const head = buf.toString('latin1', 0, headEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const close = /\r\nconnection: *close/.test(head);
  const bodyStart = headEnd + 4;
  const cl = /\r\ncontent-length: *(\d+)/.exec(head);
  if (cl) {
    const length = bodyStart + Number(cl[1]);
    return buf.length >= length ? { status, close, length } : undefined;
  }
  if (/\r\ntransfer-encoding: *chunked/.test(head)) {
    const end = buf.indexOf('\r\n0\r\n\r\n', bodyStart - 2);
    return end === -1 ? undefined : { status, close, length: end + 7 };
  }
  return { status, close, length: bodyStart };
}

export function openRaw(host: string, port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host, port, noDelay: true });
    let buffered: Buffer = Buffer.alloc(0);
    let waiter:
      | { resolve: (r: { status: number; close: boolean }) => void; reject: (e: Error) => void }
      | undefined;
    const fail = (err: Error) => {
      waiter?.reject(err);
      waiter = undefined;
    };
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const parsed = parseAnswer(buffered);
      if (!parsed || !waiter) return;
      buffered = buffered.subarray(parsed.length);
      const w = waiter;
      waiter = undefined;
      w.resolve({ status: parsed.status, close: parsed.close });
    });
    socket.on('error', (err) => {
      reject(err);
      fail(err);
    });
    socket.on('close', () => fail(new Error('connection closed')));
    socket.on('connect', () =>
      resolve({
        exchange: (bytes) =>
          new Promise((res, rej) => {
            waiter = { resolve: res, reject: rej };
            socket.write(bytes);
          }),
        close: () => socket.destroy(),
      }),
    );
  });
}
