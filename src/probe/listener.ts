/**
 * The probe's HTTP listener: it keeps every POST it is sent (headers and raw bytes, when it came)
 * and answers each with the status the probe chooses, so that it can see a delivery as sent and
 * make the sender retry.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectNodeStream, declaredLength, limitsWithin } from '../wire/collect-stream.js';

/** One request as it arrived. */
export interface CapturedDelivery {
  /** When it arrived, in ms since the epoch. */
  at: number;
  /** When it arrived, on the monotonic clock (`performance.now()`): delays are measured on it. */
  monotonic: number;
  /** Header names in lower case; a repeated header's values joined with `, `. */
  headers: Record<string, string>;
  body: Uint8Array;
  /** The status it was answered with. */
  status: number;
}

export interface ListenerOptions {
  host: string;
  port: number;
  /** The status for a delivery (called once its body has arrived). */
  answer: (delivery: Omit<CapturedDelivery, 'status'>) => number;
}

export interface ProbeListener {
  /** The address it listens at, `http://host:port/`. */
  readonly url: string;
  /** Every delivery so far, in order of arrival. */
  readonly deliveries: readonly CapturedDelivery[];
  /**
   * The first delivery, from index `from` on, that `matches`; waits for one until `timeoutMs`
   * (rejects with a message naming `what`) or until `signal` aborts.
   */
  next(
    matches: (delivery: CapturedDelivery) => boolean,
    options: { from?: number; timeoutMs: number; signal?: AbortSignal | undefined; what: string },
  ): Promise<CapturedDelivery>;
  close(): Promise<void>;
}

/** A delivery is a small JSON document: this bounds what a stranger can make the probe hold. */
const MAX_BODY_BYTES = 1024 * 1024;
const BODY_TIMEOUT_MS = 10_000;

export async function startListener({ host, port, answer }: ListenerOptions): Promise<ProbeListener> {
  const deliveries: CapturedDelivery[] = [];
  const waiting = new Set<() => void>();
  const server = createServer((req, res) => {
    const arrived = { at: Date.now(), monotonic: performance.now() };
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const limits = limitsWithin(MAX_BODY_BYTES, BODY_TIMEOUT_MS);
    collectNodeStream(req, limits, declaredLength(req.headers['content-length'])).then(
      (body) => {
        const captured = { ...arrived, headers: headersOf(req), body };
        const status = answer(captured);
        deliveries.push({ ...captured, status });
        res.writeHead(status, { 'content-type': 'application/json' }).end(`{"ok":${status < 300}}`);
        for (const wake of waiting) wake();
      },
      () => res.writeHead(413, { connection: 'close' }).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${shownHost}:${address.port}/`,
    deliveries,
    next(matches, { from = 0, timeoutMs, signal, what }) {
      return new Promise((resolve, reject) => {
        let index = from;
        const check = () => {
          for (; index < deliveries.length; index++) {
            if (matches(deliveries[index]!)) return done(() => resolve(deliveries[index]!));
          }
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`no ${what} arrived within ${Math.round(timeoutMs / 1000)} s`))),
          timeoutMs,
        );
        const aborted = () => done(() => reject(signal!.reason as Error));
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiting.delete(check);
          signal?.removeEventListener('abort', aborted);
          settle();
        };
        if (signal?.aborted) return done(() => reject(signal.reason as Error));
        signal?.addEventListener('abort', aborted, { once: true });
        waiting.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
