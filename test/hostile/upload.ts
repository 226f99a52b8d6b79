// Uploads that a server should refuse or outlive: a 100 MB body generated as it is pulled (so the
// client holds none of it), a body that trickles in, and a client that goes away mid-body.
import { once } from 'node:events';
import {
  request,
  type Agent,
  type ClientRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { createReceiver, type Receiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { completed, LIMIT, SECRET } from '../adapters/fixtures.js';
import { PATH } from '../adapters/targets.js';
import { capturingLogger } from '../support/traffic.js';

export const CHUNK = 64 * 1024;

/** Counts what the server read off its sockets, and how many connections are open. */
export function watchConnections(server: Server) {
  const sockets = new Set<Socket>();
  const closedReads: number[] = [];
  /** Per answer: what its socket had read when the server began to answer. */
  const atAnswer: number[] = [];
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    res.writeHead = (...args: unknown[]) => {
      atAnswer.push(res.socket?.bytesRead ?? -1);
      return writeHead(...args);
    };
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      closedReads.push(socket.bytesRead);
      sockets.delete(socket);
    });
  });
  return {
    /** Bytes read so far by the server from every socket it accepted since watching began. */
    bytesRead: () =>
      [...sockets].reduce((sum, socket) => sum + socket.bytesRead, 0) +
      closedReads.reduce((a, b) => a + b, 0),
    /** Bytes each answered request's connection had read when its answer began, in order. */
    atAnswer,
    get open() {
      return sockets.size;
    },
    /** Resolves once every accepted connection has closed. */
    async allClosed(): Promise<void> {
      await Promise.all([...sockets].map(closed));
    },
  };
}

export interface RefusedUpload {
  status: number;
  body: string;
  /** Bytes the client had produced when the answer came. */
  pulled: number;
}

/**
 * POSTs `total` bytes produced on demand, declaring the length or not (chunked), and stops sending
 * as soon as an answer arrives. `onAnswer` runs at that moment, before anything is torn down.
 */
export function upload(
  url: string,
  headers: Record<string, string>,
  {
    total,
    declared,
    onAnswer,
    stopOnAnswer = true,
  }: { total: number; declared: boolean; onAnswer?: () => void; stopOnAnswer?: boolean },
): Promise<RefusedUpload> {
  return new Promise((resolve, reject) => {
    let pulled = 0;
    const chunk = Buffer.alloc(CHUNK, 0x78);
    const source = new Readable({
      read() {
        if (pulled >= total) return void this.push(null);
        const size = Math.min(CHUNK, total - pulled);
        pulled += size;
        this.push(size === CHUNK ? chunk : chunk.subarray(0, size));
      },
    });
    const req: ClientRequest = request(url, {
      method: 'POST',
      agent: false,
      headers: declared ? { ...headers, 'content-length': String(total) } : headers,
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      onAnswer?.();
      if (stopOnAnswer) {
        source.unpipe(req);
        source.destroy();
      }
      const chunks: Buffer[] = [];
      res.on('data', (data: Buffer) => chunks.push(data));
      res.on('end', () => {
        const answer = { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') };
        if (stopOnAnswer) {
          resolve({ ...answer, pulled });
          req.destroy();
          return;
        }
        // A client that ignores the answer goes on sending until the server stops taking bytes.
        const finish = () => resolve({ ...answer, pulled });
        req.once('finish', finish);
        req.once('close', finish);
      });
      res.on('error', () => undefined);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    source.pipe(req);
  });
}

/**
 * Sends the headers and the first `bytes` of a body that claims more, one byte per `tick`, then
 * destroys the connection. Resolves once the client socket has closed.
 */
export async function trickleThenAbort(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  { bytes, declared, tick }: { bytes: number; declared: boolean; tick: () => Promise<void> },
): Promise<{ answered: boolean }> {
  const req = request(url, {
    method: 'POST',
    agent: false,
    headers: declared ? { ...headers, 'content-length': String(body.length) } : headers,
  });
  let answered = false;
  req.on('response', () => (answered = true));
  req.on('error', () => undefined);
  req.flushHeaders();
  for (let i = 0; i < bytes; i++) {
    req.write(body.subarray(i, i + 1));
    await tick();
  }
  const socket = req.socket ?? ((await once(req, 'socket')) as [Socket])[0];
  req.destroy();
  await closed(socket);
  return { answered };
}

/** Resolves when `socket` has closed, whatever error it closed with. */
function closed(socket: Socket): Promise<void> {
  return socket.closed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));
}

/** One POST on its own connection, closed after the answer, so no idle socket is left behind. */
export function postOnce(url: string, headers: Record<string, string>, body: string | Uint8Array) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (data: Buffer) => chunks.push(data));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A receiver that records the id of every event it dispatches, and logs into `logger.lines`. */
export function countingReceiver(options: { bodyTimeoutMs?: number } = {}): {
  receiver: Receiver;
  calls: string[];
  logger: ReturnType<typeof capturingLogger>;
} {
  const calls: string[] = [];
  const logger = capturingLogger();
  const receiver = createReceiver({ secret: SECRET, logger, ...options });
  receiver.onAny((event) => void calls.push((event as { id: string }).id));
  return { receiver, calls, logger };
}

/** Posts one valid delivery to the receiver at `origin` and gives its status. */
export async function postValid(origin: string) {
  const delivery = signDelivery({ secret: SECRET, payload: completed() });
  return (await postOnce(`${origin}${PATH}`, delivery.headers, delivery.body)).status;
}

/**
 * POSTs `total` bytes as a chunked body of 1-byte chunks (`1\r\nx\r\n` each), written over a raw
 * socket in large writes so that the client costs little while the server's parser hands the body
 * over one byte at a time. Resolves with the answer's status.
 */
export function tinyChunkUpload(
  url: string,
  headers: Record<string, string>,
  total: number,
): Promise<number> {
  const { hostname, port, pathname } = new URL(url);
  const head =
    `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n` +
    'transfer-encoding: chunked\r\n' +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n';
  const socket = connect(Number(port), hostname);
  socket.write(head);
  const piece = Buffer.from('1\r\nx\r\n'.repeat(CHUNK / 8));
  let sent = 0;
  const pump = () => {
    while (sent < total) {
      const count = Math.min(CHUNK / 8, total - sent);
      sent += count;
      if (!socket.write(count === CHUNK / 8 ? piece : piece.subarray(0, count * 6))) {
        return void socket.once('drain', pump);
      }
    }
    socket.write('0\r\n\r\n');
  };
  pump();
  return new Promise((resolve, reject) => {
    let answer = '';
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('closed before an answer')));
  });
}

export interface AgentAnswer {
  status: number;
  body: string;
  /** The answer's `Connection` header, if any. */
  connection: string | undefined;
}

/**
 * One POST through `agent` (a keep-alive agent reuses the connection for the next request): the
 * body written in `pieces`, chunked unless `headers` declare a length. With `holdLast`, the last
 * piece is held back until the answer arrives, then sent (a body the server answered early).
 * Rejects with the request's error (ECONNRESET, socket hang up) when no answer came.
 */
export function postThrough(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  pieces: readonly Uint8Array[],
  { holdLast = false }: { holdLast?: boolean } = {},
): Promise<AgentAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      if (holdLast) req.end(pieces.at(-1));
      const chunks: Buffer[] = [];
      res.on('data', (data: Buffer) => chunks.push(data));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          connection: res.headers.connection,
        }),
      );
      res.on('error', reject);
    });
    // After the answer the server may close the connection while the rest is sent: that is its right.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const sent = holdLast ? pieces.slice(0, -1) : pieces;
    for (const piece of sent) req.write(piece);
    if (holdLast) req.flushHeaders();
    else req.end();
  });
}

/** Signature headers that pass the checks made before the body is read (for another body). */
const signedHeaders = () => signDelivery({ secret: SECRET, payload: completed() }).headers;
const unsignedHeaders = () => ({ 'content-type': 'application/json' });
/**
 * A body of 256 KiB in 4 KiB pieces: more than the server parses in one read of its socket (64 KiB),
 * so that most of it is still unread when the answer goes, and less than the socket buffers hold,
 * so that the client has sent it all and reuses the connection.
 */
const PIECES = 64;
const pieces = (count = PIECES, size = LIMIT) =>
  Array.from({ length: count }, () => Buffer.alloc(size, 0x78));

/** The refusals that come before the body was read to its end, each with the request that earns it. */
export const EARLY_REFUSALS = [
  {
    name: 'an oversize chunked body',
    status: 413,
    code: 'payload_too_large',
    headers: signedHeaders,
    pieces: () => pieces(),
  },
  {
    name: 'an oversize body of declared length',
    status: 413,
    code: 'payload_too_large',
    headers: () => ({ ...signedHeaders(), 'content-length': String(PIECES * LIMIT) }),
    pieces: () => pieces(),
  },
  {
    name: 'an unsigned chunked body',
    status: 401,
    code: 'invalid_signature',
    headers: unsignedHeaders,
    pieces: () => pieces(),
  },
  {
    name: 'an unsigned body of declared length',
    status: 401,
    code: 'invalid_signature',
    headers: () => ({ ...unsignedHeaders(), 'content-length': String(PIECES * LIMIT) }),
    pieces: () => pieces(),
  },
  {
    name: 'a gzip-encoded body',
    status: 415,
    code: 'unsupported_encoding',
    headers: () => ({ ...signedHeaders(), 'content-encoding': 'gzip' }),
    pieces: () => pieces(),
  },
  {
    name: 'a body that stalls past bodyTimeoutMs',
    status: 408,
    code: 'body_timeout',
    headers: signedHeaders,
    pieces: () => pieces(2, 100),
    holdLast: true,
  },
] as const;

/** A valid signed delivery through `agent`: its status, or the error that came instead of an answer. */
export function deliverThrough(agent: Agent, url: string): Promise<{ status: number; error?: string }> {
  const delivery = signDelivery({ secret: SECRET, payload: completed() });
  return postThrough(agent, url, delivery.headers, [Buffer.from(delivery.body)]).then(
    ({ status }) => ({ status }),
    (error: NodeJS.ErrnoException) => ({ status: 0, error: error.code ?? error.message }),
  );
}
