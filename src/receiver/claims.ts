import { TIMED_OUT, within, isThenable } from '../common/deadline.js';
import { JobhookError } from '../common/errors.js';
import { ignore, messageOf, quote, type SafeLogger } from '../common/logging.js';
import { sleep } from '../common/backoff.js';
import type { ClaimResult, DedupeStore } from '../dedupe/dedupe-store.js';
import type { DeliveryInfo, ReportFailures } from './failures.js';

/**
 * The delivery a claim is for, as the pipeline's record gives it: {@link DeliveryInfo} is made
 * only when a store call fails and `onError` is told (not on every delivery).
 */
export interface ClaimFor {
  info(): DeliveryInfo;
}
import type { InFlight } from './in-flight.js';

/** A claim this receiver holds on one dedupe key. */
export interface Claim {
  readonly store: DedupeStore;
  readonly key: string;
  readonly owner: string;
}

/** A store call that failed (reported already): the pipeline answers as the step requires. */
export const STORE_FAILED: unique symbol = Symbol('store call failed');

/** What claiming a key gave: the claim when the key was new, else what the store said. */
export type ClaimTaken = Claim | 'done' | 'busy' | typeof STORE_FAILED;

/** Keeps a claim while handlers run; `stop()` once they settled. */
export interface Renewal {
  stop(): void;
}

/**
 * The dedupe store's side of an event: claim, renew while handlers run, complete or release. A
 * store call that fails or hangs is reported and gives {@link STORE_FAILED} (the lease frees the
 * key at worst); a failed complete is retried in the background, the claim renewed meanwhile.
 */
export function deliveryClaims(
  logger: SafeLogger,
  lifecycle: Pick<InFlight, 'track'>,
  report: ReportFailures,
) {
  // Owner tokens: unique per claim, and cheap. The random prefix tells receivers apart when they
  // share a store; the counter tells this receiver's claims apart. The prefix is made at the first
  // claim, not here: Workers refuse random values in global scope, where receivers are often made.
  let prefix: string | undefined;
  let counter = 0;
  let warnedLostClaim = false;

  /** Claims `key` in `store` for one delivery: at once from a store that answers at once. */
  function take(store: DedupeStore, key: string, delivery: ClaimFor): ClaimTaken | Promise<ClaimTaken> {
    prefix ??= `${globalThis.crypto.randomUUID()}.`;
    const claim: Claim = { store, key, owner: prefix + (++counter).toString(36) };
    return storeCall(claim, 'claim', delivery, taken);
  }

  function taken(result: ClaimResult | typeof STORE_FAILED, claim: Claim, delivery: ClaimFor): ClaimTaken {
    if (result === 'new') return claim;
    if (result === 'done' || result === 'busy' || result === STORE_FAILED) return result;
    return failed('claim', new TypeError(`claim() returned ${quote(messageOf(result))}`), delivery);
  }

  /**
   * Completes (`ok`) or releases the claim; a failure is reported. A complete that failed is
   * retried in the background. Resolves once the first call settled.
   */
  function completeOrRelease(claim: Claim, ok: boolean, delivery: ClaimFor): Promise<void> | void {
    return ok
      ? storeCall(claim, 'complete', delivery, completed)
      : storeCall(claim, 'release', delivery, ignore);
  }

  function completed(result: void | typeof STORE_FAILED, claim: Claim, delivery: ClaimFor): void {
    if (result === STORE_FAILED) retryComplete(claim, delivery);
  }

  function retryComplete(claim: Claim, delivery: ClaimFor) {
    const renewal = keepRenewed(claim, delivery);
    const delay = claim.store.leaseMs > 0 ? claim.store.leaseMs / 4 : 1000;
    lifecycle.track(
      (async () => {
        for (let attempt = 0; attempt < COMPLETE_RETRIES; attempt++) {
          await sleep(delay);
          if ((await storeCall(claim, 'complete', delivery, same)) !== STORE_FAILED) break;
        }
        renewal?.stop();
      })(),
    );
  }

  /** Renews the claim every quarter of its lease while async handlers run (two renewals may fail). */
  function keepRenewed(claim: Claim, delivery: ClaimFor): Renewal | undefined {
    const leaseMs = claim.store.leaseMs;
    if (!(leaseMs > 0 && Number.isFinite(leaseMs))) return undefined;
    let stopped = false;
    const renewed = (held: unknown) => {
      if (held !== false || stopped) return;
      stopped = true;
      clearInterval(timer);
      if (!warnedLostClaim) {
        warnedLostClaim = true;
        logger.warn(
          `jobhook: delivery ${quote(delivery.info().deliveryId)} lost its claim while its handlers ran ` +
            '(the lease lapsed, say while the event loop was blocked): a retry may run them meanwhile.',
        );
      }
    };
    const timer = setInterval(
      () => void storeCall(claim, 'renew', delivery, renewed),
      Math.max(1, Math.floor(leaseMs / 4)),
    );
    // Renewing alone must not keep a process alive.
    timer.unref?.();
    return {
      stop() {
        stopped = true;
        clearInterval(timer);
      },
    };
  }

  /**
   * Calls the store and gives `next` what it answered, never throwing nor rejecting: a failure is
   * reported and gives `STORE_FAILED`, as does a call that does not settle within a third of the
   * lease. A store that answers at once (the in-memory one) is answered at once: no promise, no
   * timer, no closure.
   */
  function storeCall<Step extends 'claim' | 'renew' | 'complete' | 'release', R>(
    claim: Claim,
    step: Step,
    delivery: ClaimFor,
    next: (result: StepResult<Step> | typeof STORE_FAILED, claim: Claim, delivery: ClaimFor) => R,
  ): R | Promise<R> {
    let result: unknown;
    try {
      result = claim.store[step](claim.key, claim.owner);
    } catch (error) {
      return next(failed(step, error, delivery), claim, delivery);
    }
    if (!isThenable(result)) return next(result as StepResult<Step>, claim, delivery);
    // A third of the lease: a hung complete still leaves time to retry it before the lease lapses.
    const leaseMs = claim.store.leaseMs;
    const limit = leaseMs > 0 ? Math.min(leaseMs / 3, MAX_STORE_WAIT_MS) : MAX_STORE_WAIT_MS;
    return within(Promise.resolve(result as PromiseLike<StepResult<Step>>), limit, { unref: true }).then(
      (settled) =>
        next(
          settled === TIMED_OUT
            ? failed(step, new Error(`it did not settle within ${Math.round(limit)} ms`), delivery)
            : settled,
          claim,
          delivery,
        ),
      (error: unknown) => next(failed(step, error, delivery), claim, delivery),
    );
  }

  /** Reports a store call that failed; gives {@link STORE_FAILED}. */
  function failed(step: string, error: unknown, delivery: ClaimFor): typeof STORE_FAILED {
    const info = delivery.info();
    report(
      [
        new JobhookError('dedupe_store_failed', `The dedupe store's ${step}() failed: ${messageOf(error)}`, {
          cause: error,
          deliveryId: info.deliveryId,
          eventType: info.type,
        }),
      ],
      info,
    );
    return STORE_FAILED;
  }

  return { take, keepRenewed, completeOrRelease };
}

/** What {@link deliveryClaims} returns. */
export type DeliveryClaims = ReturnType<typeof deliveryClaims>;

const same = <T>(value: T): T => value;

type StepResult<Step> = Step extends 'claim' ? ClaimResult : Step extends 'renew' ? boolean : void;

/** Longest wait for one store call (or a third of the store's lease, when shorter). */
const MAX_STORE_WAIT_MS = 10_000;
/** Further attempts at a complete that failed, a quarter of the lease apart. */
const COMPLETE_RETRIES = 3;
