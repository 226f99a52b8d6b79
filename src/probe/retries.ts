/**
 * What the attempts of one delivery tell of the sender's retries: the delays between them, and
 * whether the delivery id and the event id stay the same from one attempt to the next.
 */
import type { CapturedDelivery } from './listener.js';

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
