import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deadline, limitsWithin, readRequestBody } from 'jobhook/extend';

/**
 * The probe's HTTP listener: it keeps the POSTs the probe may use (headers and raw bytes, when it
 * came) and answers each with the status the probe chooses, so that it can see a delivery as sent
 * and make the sender retry. A stranger can reach it too, so what it holds is bounded: open
 * connections, bytes per POST, and the number and bytes of the POSTs it keeps.
 */

/** One request as it arrived. */
export interface CapturedDelivery {
  /** When it arrived, in ms since the epoch. */
  at: number;
  /** When it arrived, on the monotonic clock (`performance.now()`): delays are measured on it. */
  monotonic: number;
  /** The request's path and query, as sent: which of the probe's webhooks it came to. */
  url: string;
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
  /** Whether a delivery may be of use and is kept; the others are answered and dropped. Default: all. */
  keep?: (delivery: Omit<CapturedDelivery, 'status'>) => boolean;
}

export interface ProbeListener {
  /** The address it listens at, `http://host:port/`. */
  readonly url: string;
  /** The deliveries kept so far, in order of arrival. */
  readonly deliveries: readonly CapturedDelivery[];
  /** Drops the kept deliveries that `keep` refuses (once the probe knows what it waits for). */
  prune(keep: (delivery: CapturedDelivery) => boolean): void;
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
const MAX_BODY_BYTES = 256 * 1024;
const BODY_TIMEOUT_MS = 10_000;
// A gateway sends a few requests at once, and a probe's jobs make a few dozen deliveries.
const MAX_CONNECTIONS = 16;
const MAX_KEPT = 200;
const MAX_KEPT_BYTES = 8 * 1024 * 1024;

export async function startListener({
  host,
  port,
  answer,
  keep = () => true,
}: ListenerOptions): Promise<ProbeListener> {
  let deliveries: CapturedDelivery[] = [];
  let keptBytes = 0;
  const waiting = new Set<() => void>();
  const server = createServer((req, res) => {
    const arrived = { at: Date.now(), monotonic: performance.now() };
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    readRequestBody(req, limitsWithin(MAX_BODY_BYTES, BODY_TIMEOUT_MS)).then(
      (body) => {
        const captured = { ...arrived, url: req.url ?? '/', headers: headersOf(req), body };
        const status = answer(captured);
        const room = deliveries.length < MAX_KEPT && keptBytes + body.byteLength <= MAX_KEPT_BYTES;
        if (room && keep(captured)) {
          deliveries.push({ ...captured, status });
          keptBytes += body.byteLength;
        }
        res.writeHead(status, { 'content-type': 'application/json' }).end(`{"ok":${status < 300}}`);
        for (const wake of waiting) wake();
      },
      () => res.writeHead(413, { connection: 'close' }).end(),
    );
  });
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${shownHost}:${address.port}/`,
    get deliveries() {
      return deliveries;
    },
    prune(keeps) {
      deliveries = deliveries.filter(keeps);
      keptBytes = deliveries.reduce((total, delivery) => total + delivery.body.byteLength, 0);
    },
    next(matches, { from = 0, timeoutMs, signal, what }) {
      return new Promise((resolve, reject) => {
        let index = from;
        const check = () => {
          for (; index < deliveries.length; index++) {
            if (matches(deliveries[index]!)) return done(() => resolve(deliveries[index]!));
          }
        };
        const timer = deadline(timeoutMs, () =>
          done(() => reject(new Error(`no ${what} arrived within ${Math.round(timeoutMs / 1000)} s`))),
        );
        const aborted = () => done(() => reject(signal!.reason as Error));
        const done = (settle: () => void) => {
          timer.cancel();
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

/**
 * What the attempts of one delivery tell of the sender's retries: the delays between them, and
 * whether the delivery id and the event id stay the same from one attempt to the next.
 */

/** The report's `retries`. */
export interface RetryFinding {
  /** Whether the probe made the sender retry (`--retries-for`); the rest is empty when not. */
  measured: boolean;
  /** How long every attempt was answered 500, in ms from the first. */
  failedForMs: number;
  /** Attempts seen, the first included. */
  attempts: number;
  /** The time between consecutive attempts, in ms (one fewer than the attempts). */
  delaysMs: number[];
  /** The header that carries the delivery id, when one does. */
  deliveryIdHeader: string | null;
  /** Whether every attempt carried the same delivery id; `null` without an id header. */
  sameDeliveryId: boolean | null;
  /** Whether every attempt carried the same event id in its payload; `null` without one. */
  sameEventId: boolean | null;
  /** Whether every attempt carried the same bytes. */
  sameBody: boolean | null;
  firstAttemptAt: string | null;
  lastAttemptAt: string | null;
  /** The last attempt's distance from the first, in ms. */
  lastAttemptAfterMs: number | null;
  /** Whether an attempt after the window was answered 200 (`false`: the sender had stopped, or was slower than the time-out). */
  delivered: boolean | null;
}

/** Names a delivery id goes by, most telling first. */
const ID_HEADERS = [/delivery/, /^(webhook|svix)-id$/, /(^|-)(message|msg|event|webhook)-id$/, /(^|-)id$/];

export function retryFinding(
  attempts: readonly CapturedDelivery[],
  {
    measured,
    failedForMs,
    idHeader,
    eventIdOf,
  }: {
    measured: boolean;
    failedForMs: number;
    /** The signature family's id header, when it has one. */
    idHeader: string | null;
    eventIdOf: (delivery: CapturedDelivery) => unknown;
  },
): RetryFinding {
  const first = attempts[0];
  const last = attempts[attempts.length - 1];
  const deliveryIdHeader = idHeader ?? (first ? deliveryIdHeaderOf(first) : null);
  const allSame = (values: unknown[]) => values.every((value) => value === values[0]);
  const eventIds = attempts.map(eventIdOf);
  const bodies = attempts.map((attempt) => Buffer.from(attempt.body).toString('base64'));
  return {
    measured,
    failedForMs: measured ? failedForMs : 0,
    attempts: attempts.length,
    delaysMs: attempts
      .slice(1)
      .map((attempt, index) => Math.round(attempt.monotonic - attempts[index]!.monotonic)),
    deliveryIdHeader,
    sameDeliveryId:
      deliveryIdHeader === null || attempts.length < 2
        ? null
        : allSame(attempts.map((attempt) => attempt.headers[deliveryIdHeader])),
    sameEventId: attempts.length < 2 || eventIds[0] === undefined ? null : allSame(eventIds),
    sameBody: attempts.length < 2 ? null : allSame(bodies),
    firstAttemptAt: first ? new Date(first.at).toISOString() : null,
    lastAttemptAt: last ? new Date(last.at).toISOString() : null,
    lastAttemptAfterMs: first && last ? Math.round(last.monotonic - first.monotonic) : null,
    delivered: measured ? (last?.status ?? 500) < 300 : null,
  };
}

function deliveryIdHeaderOf(delivery: CapturedDelivery): string | null {
  const names = Object.keys(delivery.headers).filter((name) => name !== 'x-request-id');
  for (const pattern of ID_HEADERS) {
    const name = names.find((candidate) => pattern.test(candidate));
    if (name !== undefined) return name;
  }
  return null;
}
