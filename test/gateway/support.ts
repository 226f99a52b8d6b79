import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A parsed JSON answer: tests read whatever the wire carried, so it is deliberately untyped. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** A request to the simulator on the wire, without the client, so tests see the raw envelope. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { apiKey?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  return { status: response.status, headers: response.headers, json: await response.json() };
}

/** Sends one request with a Host header of our choosing (fetch will not let us set Host). */
export function callWithHost(baseUrl: string, host: string, apiKey: string) {
  const url = new URL(baseUrl);
  return new Promise<{ status: number; json: Json }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: '/api/v1/webhooks',
        headers: { host, authorization: `Bearer ${apiKey}` },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export interface SunkRequest {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A receiving endpoint that records every request and answers with `respond` (default 200).
 * `next()` resolves with the next request, so tests await deliveries instead of sleeping.
 */
export async function startSink(respond: (request: SunkRequest, index: number) => number = () => 200) {
  const received: SunkRequest[] = [];
  const waiters: ((request: SunkRequest) => void)[] = [];
  let consumed = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const status = respond(request, received.length);
      received.push(request);
      res.writeHead(status).end();
      waiters.shift()?.(request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** The next request not yet returned by `next`. */
    next(): Promise<SunkRequest> {
      const index = consumed++;
      if (index < received.length) return Promise.resolve(received[index]!);
      return new Promise((resolve) => waiters.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
