// Real servers on 127.0.0.1 and a client that can stream, shared by the conformance and adapter tests.
import { once } from 'node:events';
import { createServer, request, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Running {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The listening server, for tests that watch its connections. */
  server: Server;
  close(): Promise<void>;
}

/**
 * Listens on a free port, or on `atPort` to restart on the same address; `close` also drops
 * kept-alive connections so it never waits on them.
 */
export async function listen(server: Server | RequestListener, atPort = 0): Promise<Running> {
  const http = typeof server === 'function' ? createServer(server) : server;
  http.listen(atPort, '127.0.0.1');
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    server: http,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.close((error) => (error ? reject(error) : resolve()));
        http.closeAllConnections();
      }),
  };
}

export interface StreamedAnswer {
  status: number;
  body: string;
  /** Bytes the client had written when the answer came. */
  sent: number;
}

/**
 * POSTs a body that never ends on its own: `chunk` once (`endless: false`) or again and again until
 * the server answers. A server that waited for the end of the body would never answer, so an answer
 * proves it decided early: on the declared length, or by cutting the stream off at the limit.
 * Without a `content-length` header the body is sent chunked.
 */
export function postUnfinished(
  url: string,
  headers: Record<string, string>,
  { chunk, endless }: { chunk: Buffer; endless: boolean },
): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, { method: 'POST', headers });
    const write = () => {
      sent += chunk.length;
      return req.write(chunk);
    };
    const pump = () => {
      while (!answered && endless && write());
    };
    req.on('drain', pump);
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (data: Buffer) => chunks.push(data));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), sent });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (endless) pump();
    else write();
  });
}
