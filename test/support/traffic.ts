// HTTP traffic for the hostile, load and fault suites: a keep-alive sender, a bounded pool, the
// stress multiplier, and a logger that keeps every line it is given.
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'jobhook';

/**
 * `npm run test:stress` sets JOBHOOK_STRESS: a number of at least 2 multiplies the counts by it,
 * any other non-empty value by 10. Unset, the suites keep the sizes `npm test` runs.
 */
export const STRESS = stressFactor(process.env.JOBHOOK_STRESS);

function stressFactor(value: string | undefined): number {
  if (value === undefined || value === '' || value === '0') return 1;
  const n = Number(value);
  return Number.isInteger(n) && n >= 2 ? n : 10;
}

/** `count` scaled by the stress factor. */
export const scaled = (count: number) => count * STRESS;

/** A test time-out that grows with the stress factor: a bound against hangs, never an assertion. */
export const timeoutFor = (ms: number) => ms * STRESS;

export interface Sent {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Outgoing {
  method?: string;
  path: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

export interface Sender {
  send(outgoing: Outgoing): Promise<Sent>;
  /** Drops every kept-alive connection. */
  close(): void;
}

/** Requests to `origin` over at most `connections` kept-alive sockets. */
export function createSender(origin: string, connections = 64): Sender {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  return {
    send: ({ method = 'POST', path, headers, body }) =>
      new Promise((resolve, reject) => {
        const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
        const req = request(
          `${origin}${path}`,
          { method, agent, headers: { ...headers, 'content-length': String(bytes.byteLength) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                headers: res.headers,
                body: Buffer.concat(chunks).toString('utf8'),
              }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(bytes);
      }),
    close: () => agent.destroy(),
  };
}

/** Runs `work` over `items` with at most `concurrency` at a time; rejects on the first failure. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** A logger that records every line at every level, to scan what jobhook writes. */
export function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    error: (message) => void lines.push(`error ${message}`),
    warn: (message) => void lines.push(`warn ${message}`),
  };
}

/** Unhandled rejections and uncaught exceptions seen while `record` runs. */
export async function withoutProcessErrors<T>(
  run: () => Promise<T>,
): Promise<{ result: T; errors: unknown[] }> {
  const errors: unknown[] = [];
  const onError = (error: unknown) => void errors.push(error);
  process.on('unhandledRejection', onError);
  process.on('uncaughtException', onError);
  try {
    const result = await run();
    // Let rejections left unhandled by the last requests surface before looking.
    await new Promise((resolve) => setImmediate(resolve));
    return { result, errors };
  } finally {
    process.off('unhandledRejection', onError);
    process.off('uncaughtException', onError);
  }
}
