import { answers, type ReceiverResponse } from '../wire/answers.js';
import { JobhookError } from '../common/errors.js';
import { messageOf, quote } from '../common/logger.js';
import { isThenable } from '../common/thenable.js';
import type { ClaimResult, DedupeStore } from '../dedupe/dedupe-store.js';
import type { InFlight } from './in-flight.js';
import type { ResolvedOptions } from './options.js';
import { runHandlers, type EventHandler } from './run-handlers.js';
import { runObserved, type DeliveryTrace } from './observe.js';

/** The delivery as handlers and `onError` see it. */
export interface DeliveryInfo {
  deliveryId: string | undefined;
  type: string;
}

/** Hands failures to `onError` (or the log) without ever waiting for it. */
export type ReportFailures = (failures: readonly JobhookError[], delivery: DeliveryInfo) => void;

/** A claim this receiver holds on one dedupe key. */
interface Claim {
  store: DedupeStore;
  key: string;
  owner: string;
}

type Answer = ReceiverResponse | Promise<ReceiverResponse>;

/**
 * The delivery state machine: claim the key, run the handlers while renewing the claim, then
 * complete it (success) or release it (failure). Whatever a handler or the store does, each
 * delivery is answered and no key stays claimed past its lease:
 *
 * - a store call that throws, rejects or hangs is reported as `dedupe_store_failed`; a failed
 *   claim answers 500 (the sender retries), a failed complete still answers 200 (the handlers did
 *   succeed), a failed release still answers 500; the lease frees the key at worst;
 * - a handler that outlives the timeout answers 500 but keeps the claim, renewed, until it settles
 *   (a retry meanwhile gets 409), and only then completes or releases it; `close()` waits for it.
 */
export function createDispatcher(config: ResolvedOptions, lifecycle: InFlight, report: ReportFailures) {
  // Owner tokens: unique per claim, and cheap. The random prefix tells receivers apart when they
  // share a store; the counter tells this receiver's claims apart. The prefix is made at the first
  // claim, not here: Workers refuse random values in global scope, where receivers are often made.
  let prefix: string | undefined;
  let counter = 0;
  let warnedLostClaim = false;

  function dispatch(
    handlers: readonly EventHandler<unknown>[],
    event: unknown,
    delivery: DeliveryInfo,
    key: string | undefined,
    trace?: DeliveryTrace,
  ): Answer {
    const store = key === undefined ? undefined : config.dedupe;
    if (!store || key === undefined) return run(handlers, event, delivery, undefined, trace);
    prefix ??= `${globalThis.crypto.randomUUID()}.`;
    const claim: Claim = { store, key, owner: prefix + (++counter).toString(36) };
    const claimed = storeCall(claim, 'claim', delivery);
    if (claimed === FAILED) return answers.internal();
    if (!isThenable(claimed)) return afterClaim(claimed, handlers, event, delivery, claim, trace);
    return claimed.then((result) =>
      result === FAILED ? answers.internal() : afterClaim(result, handlers, event, delivery, claim, trace),
    );
  }

  function afterClaim(
    result: unknown,
    handlers: readonly EventHandler<unknown>[],
    event: unknown,
    delivery: DeliveryInfo,
    claim: Claim,
    trace: DeliveryTrace | undefined,
  ): Answer {
    trace?.claimed(result);
    if (result === 'done') return answers.duplicate();
    if (result === 'busy') return answers.inProgress();
    if (result === 'new') return run(handlers, event, delivery, claim, trace);
    reportStoreFailure('claim', new TypeError(`claim() returned ${quote(messageOf(result))}`), delivery);
    return answers.internal();
  }

  function run(
    handlers: readonly EventHandler<unknown>[],
    event: unknown,
    delivery: DeliveryInfo,
    claim: Claim | undefined,
    trace: DeliveryTrace | undefined,
  ): Answer {
    const ran = runObserved(trace, () => runHandlers(handlers, event, delivery, config.handlerTimeoutMs));
    // Handlers that returned no promise: no renewal, no timer, no await.
    if (Array.isArray(ran)) return finish(ran, delivery, claim);
    const renewal = claim && startRenewal(claim, delivery);
    return ran.then(({ failures, late }) => {
      if (!late) {
        renewal?.stop();
        return finish(failures, delivery, claim);
      }
      // Timed out with handlers still running: answer now, keep the claim until they settle.
      report(failures, delivery);
      const reported = failures.length - 1; // the timeout itself is not among `late`'s failures
      lifecycle.track(
        late.then(async (all) => {
          renewal?.stop();
          report(
            all.slice(reported).filter((failure) => !failures.includes(failure)),
            delivery,
          );
          if (claim) await settleClaim(claim, all.length === 0, delivery);
        }),
      );
      return answers.handlerFailed();
    });
  }

  function finish(failures: JobhookError[], delivery: DeliveryInfo, claim: Claim | undefined): Answer {
    const ok = failures.length === 0;
    if (!ok) report(failures, delivery);
    const answer = ok ? answers.ok() : answers.handlerFailed();
    if (!claim) return answer;
    const settled = settleClaim(claim, ok, delivery);
    return isThenable(settled) ? settled.then(() => answer) : answer;
  }

  /**
   * Completes or releases the claim; a failure is reported and the answer stays the same. A
   * complete that fails is retried in the background, with the claim renewed meanwhile, so that a
   * blip of a shared store does not let a duplicate delivery of the event run its handlers again.
   */
  function settleClaim(claim: Claim, ok: boolean, delivery: DeliveryInfo): void | Promise<unknown> {
    const settled = storeCall(claim, ok ? 'complete' : 'release', delivery);
    if (!ok) return isThenable(settled) ? settled : undefined;
    if (!isThenable(settled)) {
      if (settled === FAILED) retryComplete(claim, delivery);
      return undefined;
    }
    return settled.then((result) => {
      if (result === FAILED) retryComplete(claim, delivery);
    });
  }

  function retryComplete(claim: Claim, delivery: DeliveryInfo) {
    const renewal = startRenewal(claim, delivery);
    const delay = claim.store.leaseMs > 0 ? claim.store.leaseMs / 4 : 1000;
    lifecycle.track(
      (async () => {
        for (let attempt = 0; attempt < COMPLETE_RETRIES; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, delay));
          if ((await storeCall(claim, 'complete', delivery)) !== FAILED) break;
        }
        renewal?.stop();
      })(),
    );
  }

  /** Renews the claim every quarter of its lease while async handlers run (two renewals may fail). */
  function startRenewal(claim: Claim, delivery: DeliveryInfo) {
    const leaseMs = claim.store.leaseMs;
    if (!(leaseMs > 0 && Number.isFinite(leaseMs))) return undefined;
    let stopped = false;
    const renewed = (held: unknown) => {
      if (held !== false || stopped) return;
      stopped = true;
      clearInterval(timer);
      if (!warnedLostClaim) {
        warnedLostClaim = true;
        config.logger.warn(
          `jobhook: delivery ${quote(delivery.deliveryId)} lost its claim while its handlers ran ` +
            '(the lease lapsed, say while the event loop was blocked): a retry may run them meanwhile.',
        );
      }
    };
    const timer = setInterval(
      () => {
        const held = storeCall(claim, 'renew', delivery);
        if (isThenable(held)) void held.then(renewed);
        else renewed(held);
      },
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
   * Calls the store, never throwing nor rejecting: a failure is reported and gives `FAILED`. A call
   * that does not settle within a third of the lease is given up on, a failure too.
   */
  function storeCall<Step extends 'claim' | 'renew' | 'complete' | 'release'>(
    claim: Claim,
    step: Step,
    delivery: DeliveryInfo,
  ): StepResult<Step> | typeof FAILED | Promise<StepResult<Step> | typeof FAILED> {
    let result: unknown;
    try {
      result = claim.store[step](claim.key, claim.owner);
    } catch (error) {
      reportStoreFailure(step, error, delivery);
      return FAILED;
    }
    // A synchronous store (the in-memory one) answers here, with nothing allocated for the call.
    if (!isThenable(result)) return result as StepResult<Step>;
    const failed = (error: unknown): typeof FAILED => {
      reportStoreFailure(step, error, delivery);
      return FAILED;
    };
    // A third of the lease: a hung complete still leaves time to retry it before the lease lapses.
    const leaseMs = claim.store.leaseMs;
    const limit = leaseMs > 0 ? Math.min(leaseMs / 3, MAX_STORE_WAIT_MS) : MAX_STORE_WAIT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`it did not settle within ${Math.round(limit)} ms`)), limit);
      timer.unref?.();
    });
    return Promise.race([Promise.resolve(result as PromiseLike<StepResult<Step>>), timedOut])
      .then(undefined, failed)
      .finally(() => clearTimeout(timer));
  }

  function reportStoreFailure(step: string, error: unknown, delivery: DeliveryInfo) {
    report(
      [
        new JobhookError('dedupe_store_failed', `The dedupe store's ${step}() failed: ${messageOf(error)}`, {
          cause: error,
          deliveryId: delivery.deliveryId,
          eventType: delivery.type,
        }),
      ],
      delivery,
    );
  }

  return dispatch;
}

type StepResult<Step> = Step extends 'claim' ? ClaimResult : Step extends 'renew' ? boolean : void;

const FAILED: unique symbol = Symbol('store call failed');
/** Longest wait for one store call (or a third of the store's lease, when shorter). */
const MAX_STORE_WAIT_MS = 10_000;
/** Further attempts at a complete that failed, a quarter of the lease apart. */
const COMPLETE_RETRIES = 3;
