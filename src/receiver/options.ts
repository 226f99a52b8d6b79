import {
  checkOption,
  invalidOption,
  MS_OR_NONE,
  nonNegativeNumber,
  optionNames,
  positiveInteger,
  positiveNumber,
  refuseUnknownOptions,
} from '../common/option-checks.js';
import { tenantLookup, type SecretLookup, type TenantLookup } from './tenants.js';
import type { DedupeStore } from '../dedupe/dedupe-store.js';
import type { Handoff } from '../handoff/handoff.js';
import type { Inbox } from '../inbox/inbox.js';
import type { ReceiverObserver } from './observe.js';
import { resolveReconcile, type ReconcileOptions, type ResolvedReconcile } from '../reconcile/options.js';
import { memoryDedupeStore } from '../dedupe/memory-store.js';
import { JobhookError } from '../common/errors.js';
import type { EventSchemas } from '../events/schemas.js';
import {
  defaultLogger,
  redactingLogger,
  safeLogger,
  type Logger,
  type SafeLogger,
} from '../common/logging.js';
import { redactor, type Redactor } from '../common/redaction.js';
import type { HeaderReader } from '../wire/headers.js';
import { isRefusalCode } from '../signatures/verifier.js';
import { standardWebhooks } from '../signatures/standard-webhooks.js';
import type { JobResultsOptions } from '../results/job-results.js';
import { resolveContract, type ResolvedContract } from '../contract/receiver-contract.js';
import type { ProbeReportJson, ReceiverContract } from '../contract/receiver-contract.js';
import type { ResultChannel } from '../results/job-result.js';
import { resolveConfirm, type ConfirmOptions, type ResolvedConfirm } from './confirm.js';
import {
  refuse,
  type CustomVerifyFunction,
  type Verifier,
  type VerifyFunction,
  type VerifyOutcome,
} from '../signatures/verifier.js';

/** Options of {@link createReceiver}. Only `secret` is required (or `confirm`, for a sender that signs nothing jobhook checks). */
export interface ReceiverOptions<S extends EventSchemas = Record<never, never>> {
  /**
   * The webhook's `secret_key`, or several during a rotation. Or a function that picks them per
   * delivery for many tenants on one receiver, `({ url }) => ({ tenant, secret })` (see
   * {@link SecretLookup}): every key, result and tracked task is then scoped to the tenant.
   */
  secret?: string | readonly string[] | SecretLookup;
  /** The signature scheme. Default: `standardWebhooks()`. A function is a custom verifier. */
  verifier?: Verifier | CustomVerifyFunction;
  /** A sender jobhook did not assume: the report of `npx jobhook probe` (docs/contracts.md), in place of `verifier`. */
  contract?: ReceiverContract | { contract: ReceiverContract } | ProbeReportJson;
  /** Accept deliveries without checking any signature. Only for local experiments. */
  dangerouslySkipVerification?: boolean;
  /** How far a signed timestamp may be from the clock, in seconds, either way. Default 300. */
  toleranceSeconds?: number;
  /** The clock, in milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
  /** Replace or add an event type's schema: any Standard Schema (zod, valibot, arktype); handler types follow it. */
  schemas?: S;
  /** Where events are claimed and remembered once handled. Default: this process's memory; `false`: none. */
  dedupe?: DedupeStore | false;
  /**
   * What makes two deliveries the same: `'event'` (default: the payload's `id`, else the delivery
   * id), `'delivery'` (the delivery id first), or a function of the verified delivery.
   */
  dedupeKey?: 'event' | 'delivery' | DedupeKeyFunction;
  /** Verify, then enqueue: the queue stores each event once and `receiver.work()` runs the handlers. Not with `dedupe`. */
  handoff?: Handoff;
  /**
   * Store every verified delivery before answering 2xx, and run its handlers from there, such as
   * `sqliteInbox({ path })` (docs/inbox.md): nothing is lost to a crash, and `receiver.replay()`
   * runs refused or failed deliveries again. Not with `handoff`.
   */
  inbox?: Inbox;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Longest a body may take to arrive, in ms (408 past it). Default 10,000; 0 for none. */
  bodyTimeoutMs?: number;
  /** How long handlers may run before the event fails (500), in ms. Default 10,000; 0 for none. */
  handlerTimeoutMs?: number;
  /** @deprecated It only ever logged a warning; it goes in the next version (see docs/timeouts.md). */
  senderTimeoutMs?: number;
  /** Where jobhook writes: failures at error, refusals at warn (ten lines a minute). Secrets are redacted. Default: the console. */
  logger?: Logger;
  /** How job results for waits are kept: a channel between instances, or `{ channel?, maxEntries?, maxAgeMs? }`; `false`: none. */
  results?: ResultChannel | JobResultsOptions | false;
  /** Sees every delivery, such as `otelObserver()` from `jobhook/otel`. */
  observer?: ReceiverObserver;
  /**
   * Poll the tasks whose webhook never came (`{ client, jobs, afterMs?, intervalMs? }`): an
   * outcome found runs the same handlers once, whichever comes first (docs/reconciliation.md).
   */
  reconcile?: ReconcileOptions;
  /**
   * Take each delivery as a hint (`{ client, jobs?, lookupsPerMinute? }`): the receiver asks the
   * gateway for the task and runs the handlers with its answer (`context.confirmed`). With it,
   * `secret` may be left out for a sender whose signature jobhook cannot check (docs/confirm.md).
   */
  confirm?: ConfirmOptions;
}

/** What a `dedupeKey` function is given: a delivery that passed its signature and schema checks. */
export interface VerifiedDelivery {
  /** The sender's delivery id (`webhook-id` in Standard Webhooks), else the payload's `id`. */
  deliveryId: string | undefined;
  /** The event type. */
  type: string;
  /** The validated event (for a type with no schema, the payload as it came). */
  event: unknown;
  /** The delivery's headers; for an event found by polling or run from a queue, none. */
  headers: HeaderReader;
  /** The tenant, with a `secret` function: jobhook scopes the key you return to it. */
  tenant: string | undefined;
}

/** Computes a delivery's dedupe key; `undefined` dedupes nothing for that delivery. */
export type DedupeKeyFunction = (delivery: VerifiedDelivery) => string | undefined;

export interface ResolvedOptions {
  verify: VerifyFunction | undefined;
  /** The fixed secrets (none with a `secret` function). */
  secrets: readonly string[];
  /** Every secret the receiver knows, the ones a `secret` function returned included: for the log and `onError`. */
  redact: Redactor;
  /** With a `secret` function: the function, with the verifiers of the secrets it returns. */
  lookup: TenantLookup | undefined;
  toleranceSeconds: number;
  now: () => number;
  dedupe: DedupeStore | undefined;
  dedupeKey: 'event' | 'delivery' | DedupeKeyFunction;
  handoff: Handoff | undefined;
  inbox: Inbox | undefined;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  handlerTimeoutMs: number;
  logger: SafeLogger;
  observer: ReceiverObserver | undefined;
  reconcile: ResolvedReconcile | undefined;
  /**
   * A sender whose payloads have another shape: turns a verified, decoded payload (and its
   * headers) into jobhook's own shape, before validation. `undefined`: the payload is taken as it is.
   */
  mapPayload: ((payload: unknown, headers: HeaderReader) => unknown) | undefined;
  confirm: ResolvedConfirm | undefined;
}

const MIB = 1024 * 1024;
const WHERE = 'createReceiver';
/** A time-out the receiver can go without: 0 (or Infinity) for none. */
const NO_LIMIT = { infinite: true, unit: MS_OR_NONE };

const RECEIVER_OPTIONS = optionNames<ReceiverOptions<EventSchemas>>()([
  'secret',
  'verifier',
  'contract',
  'dangerouslySkipVerification',
  'toleranceSeconds',
  'now',
  'schemas',
  'dedupe',
  'dedupeKey',
  'handoff',
  'inbox',
  'maxBodyBytes',
  'bodyTimeoutMs',
  'handlerTimeoutMs',
  'senderTimeoutMs',
  'logger',
  'results',
  'observer',
  'reconcile',
  'confirm',
]);

/** Warns, once, when a slow handler's answer would come after the sender gave up. */
function warnOnTimeouts(
  logger: SafeLogger,
  handlerTimeoutMs: number,
  senderTimeoutMs: number | undefined,
): void {
  if (senderTimeoutMs === undefined) return;
  if (handlerTimeoutMs === 0 || handlerTimeoutMs >= senderTimeoutMs) {
    logger.warn(
      `jobhook: handlerTimeoutMs (${handlerTimeoutMs === 0 ? 'none' : `${handlerTimeoutMs} ms`}) is not below the sender's ` +
        `time-out (${senderTimeoutMs} ms): a slow handler's 500 would come after the sender gave up, and its retry ` +
        'would get 409 while the handler still runs. Lower handlerTimeoutMs (see docs/timeouts.md).',
    );
  }
}

export function resolveOptions(options: ReceiverOptions<EventSchemas>): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw invalidOption(WHERE, 'options', 'an object with your `secret`', options);
  }
  refuseUnknownOptions(options, RECEIVER_OPTIONS, 'createReceiver', {
    apiKey: 'it belongs in `createClient({ apiKey })`',
    baseUrl: 'it belongs in `createClient({ baseUrl })`',
    path: "it belongs in the adapter's options, e.g. `nodeHandler(receiver, { path })`",
    timeoutMs: 'did you mean `handlerTimeoutMs` or `bodyTimeoutMs`?',
    ...Object.fromEntries(
      ['onJobCompleted', 'onJobFailed', 'onAny', 'onError', 'on'].map((method) => [
        method,
        `\`${method}\` is a method of the receiver: \`createReceiver({ secret }).${method}(${method === 'on' ? "'job.completed', handler" : 'handler'})\``,
      ]),
    ),
  });
  const skip = options.dangerouslySkipVerification === true;
  const { secret } = options;
  const find = typeof secret === 'function' ? secret : undefined;
  const reconcile = reconcileOf(options);
  const confirm =
    options.confirm === undefined ? undefined : resolveConfirm(options.confirm, reconcile?.jobs);
  // Confirm mode takes a contract whose sender signs nothing jobhook checks: the gateway's answer is the proof.
  const contract = contractOf(options, skip || confirm !== undefined);
  const unchecked = contract !== undefined && contract.verifier === undefined;
  const unsigned =
    skip ||
    unchecked ||
    (confirm !== undefined &&
      secret === undefined &&
      options.verifier === undefined &&
      contract === undefined);
  const secrets = typeof secret === 'function' || (unsigned && secret === undefined) ? [] : secretsOf(secret);
  // A lookup's secrets are learnt delivery by delivery, and join the redaction as they come.
  const redact = redactor(secrets);
  const verifier = contract?.verifier ?? options.verifier;
  const lookup =
    find &&
    tenantLookup(find, (found) => (unchecked ? acceptUnsigned : verifyFunction(verifier, found)), redact);
  const resolved: ResolvedOptions = {
    verify: unsigned || lookup ? undefined : verifyFunction(verifier, secrets),
    secrets,
    redact,
    lookup,
    toleranceSeconds: nonNegativeNumber(WHERE, 'toleranceSeconds', options.toleranceSeconds, 300, {
      infinite: true,
      unit: 's',
    }),
    now: options.now ?? Date.now,
    dedupe:
      options.dedupe === false || handoffOf(options) ? undefined : (options.dedupe ?? memoryDedupeStore()),
    dedupeKey: dedupeKeyChoice(options.dedupeKey),
    handoff: handoffOf(options),
    inbox: inboxOf(options),
    maxBodyBytes: positiveInteger(WHERE, 'maxBodyBytes', options.maxBodyBytes, MIB, 'bytes'),
    bodyTimeoutMs: nonNegativeNumber(WHERE, 'bodyTimeoutMs', options.bodyTimeoutMs, 10_000, NO_LIMIT),
    handlerTimeoutMs: nonNegativeNumber(
      WHERE,
      'handlerTimeoutMs',
      options.handlerTimeoutMs,
      10_000,
      NO_LIMIT,
    ),
    // Wrapped once here, so that no logger failure anywhere can change an answer.
    logger: safeLogger(redactingLogger(options.logger ?? defaultLogger, redact)),
    observer: observerOf(options.observer),
    reconcile,
    mapPayload: contract?.mapPayload,
    confirm,
  };
  const sender = options.senderTimeoutMs;
  if (sender !== undefined) positiveNumber(WHERE, 'senderTimeoutMs', sender, 0, { unit: 'ms' });
  warnOnTimeouts(resolved.logger, resolved.handlerTimeoutMs, sender);
  return resolved;
}

/** `contract`, checked: it names the scheme, so it cannot come with a `verifier`. */
function contractOf(options: ReceiverOptions<EventSchemas>, skip: boolean): ResolvedContract | undefined {
  if (options.contract === undefined) return undefined;
  if (options.verifier !== undefined) {
    throw new JobhookError(
      'invalid_options',
      'createReceiver: pass `contract` or `verifier`, not both: the contract names its signature scheme.',
    );
  }
  return resolveContract(options.contract, skip);
}

/** `reconcile`, checked; it needs somewhere to dedupe, or the webhook and the poll could both run. */
function reconcileOf(options: ReceiverOptions<EventSchemas>): ResolvedReconcile | undefined {
  if (options.reconcile === undefined) return undefined;
  if (options.dedupe === false) {
    throw new JobhookError(
      'invalid_options',
      'createReceiver: `reconcile` needs a dedupe store (or a hand-off), so that a webhook and a poll of one task run the handlers once: remove `dedupe: false`.',
    );
  }
  return resolveReconcile(options.reconcile);
}

function handoffOf(options: ReceiverOptions<EventSchemas>): Handoff | undefined {
  const { handoff } = options;
  if (handoff === undefined) return undefined;
  const valid = typeof handoff === 'object' && handoff !== null && typeof handoff.enqueue === 'function';
  checkOption(WHERE, 'handoff', handoff, valid, 'a hand-off, e.g. bullmqHandoff({ queue })');
  if (options.dedupe !== undefined && options.dedupe !== false) {
    throw new JobhookError(
      'invalid_options',
      'createReceiver: pass `handoff` or `dedupe`, not both: with a hand-off the queue dedupes (one job per dedupe key).',
    );
  }
  return handoff;
}

function inboxOf(options: ReceiverOptions<EventSchemas>): Inbox | undefined {
  const { inbox } = options;
  if (inbox === undefined) return undefined;
  const given: Partial<Inbox> | null = inbox;
  const valid =
    typeof given === 'object' &&
    given !== null &&
    ['store', 'quarantine', 'lease', 'settle', 'list', 'requeue', 'prune'].every(
      (method) => typeof given[method as keyof Inbox] === 'function',
    );
  checkOption(WHERE, 'inbox', inbox, valid, 'an inbox, e.g. sqliteInbox({ path }) from jobhook/sqlite');
  if (options.handoff !== undefined) {
    throw new JobhookError(
      'invalid_options',
      'createReceiver: pass `inbox` or `handoff`, not both: each stores the delivery before its answer.',
    );
  }
  return inbox;
}

function dedupeKeyChoice(key: ReceiverOptions['dedupeKey']): ResolvedOptions['dedupeKey'] {
  if (typeof key === 'function') return key;
  if (key === undefined || key === 'event' || key === 'delivery') return key ?? 'event';
  throw invalidOption(WHERE, 'dedupeKey', '"event", "delivery" or a function', key);
}

function secretsOf(secret: string | readonly string[] | undefined): string[] {
  const secrets: unknown[] =
    typeof secret === 'string' ? [secret] : Array.isArray(secret) ? [...(secret as unknown[])] : [];
  const valid = secrets.length > 0 && secrets.every((s) => typeof s === 'string' && s.length > 0);
  checkOption(
    WHERE,
    'secret',
    secret,
    valid,
    'the secret_key your webhook was created with: a non-empty string, an array of them during a rotation, ' +
      'or a function that picks them per delivery (for a sender that signs nothing jobhook can check, ' +
      'confirm each delivery with the gateway instead: `confirm: { client, jobs }`)',
  );
  return secrets as string[];
}

/** A contract's sender that signs nothing jobhook checks, in confirm mode: the tenant's hints pass to be confirmed. */
const acceptUnsigned: VerifyFunction = () => ({ ok: true });

function verifyFunction(verifier: ReceiverOptions['verifier'], secrets: readonly string[]): VerifyFunction {
  if (verifier === undefined) return standardWebhooks().prepare(secrets);
  if (typeof verifier === 'function') {
    return async (request) => {
      // Not a spread: for a body handed over as a string, `body` is a getter (made on first read),
      // which a spread would leave out.
      const { headers, body, text, now, toleranceSeconds, headersChecked } = request;
      return closedOutcome(
        await verifier({ headers, body, text, now, toleranceSeconds, headersChecked, secrets }),
      );
    };
  }
  checkOption(
    WHERE,
    'verifier',
    verifier,
    typeof verifier?.prepare === 'function',
    'a function or an object with prepare(secrets)',
  );
  return verifier.prepare(secrets);
}

/** A custom verifier's answer in the closed form: anything unrecognised is a refusal, `no_match`. */
function closedOutcome(result: VerifyOutcome | boolean): VerifyOutcome {
  if (result === true) return { ok: true };
  if (typeof result !== 'object' || result === null) return refuse('no_match');
  if (result.ok === true) return typeof result.id === 'string' ? { ok: true, id: result.id } : { ok: true };
  const detail = typeof result.detail === 'string' ? result.detail : undefined;
  return refuse(isRefusalCode(result.code) ? result.code : 'no_match', detail);
}

/** The observer, checked: a mistake shows at startup, not as a log line on every delivery. */
function observerOf(observer: ReceiverObserver | undefined): ReceiverObserver | undefined {
  if (observer === undefined) return undefined;
  const given: Partial<ReceiverObserver> | null = observer;
  const valid = typeof given?.start === 'function' && typeof given.end === 'function';
  checkOption(
    WHERE,
    'observer',
    observer,
    valid,
    'an object with start() and end(), such as otelObserver() from jobhook/otel',
  );
  return observer;
}
