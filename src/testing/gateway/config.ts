/**
 * The simulator's options and the defaults it picks where the gateway document is silent.
 * Every choice here is written down in docs/gateway-simulator.md; keep the two in step.
 */

import { rootCertificates } from 'node:tls';
import {
  checkOption,
  fraction,
  func,
  nonNegativeNumber,
  numberList,
  oneOf,
  optionNames,
  positiveInteger,
  positiveNumber,
  refuseUnknownOptions,
  wholeNumber,
} from '../../common/errors.js';
import type { Verifier } from '../../signatures/verifier.js';
import { resolveSigning, type DeliverySigning, type Signing } from '../signing.js';
import type { ListPaging, ListStyle } from './pages.js';
import { PAYLOAD_SHAPES, type PayloadShape } from './payload-shapes.js';

/** How a job ends. `unknown` ends it in the `unknown` status, which sends no delivery. */
export type JobOutcome =
  | { status: 'completed'; image_url?: string }
  | { status: 'failed'; error?: { code: string; message: string } }
  | { status: 'unknown' };

/** What a submission asked for, given to `jobs.outcome` to decide how the job ends. */
export interface JobRequest {
  task_id: string;
  model: string;
  prompt: string;
  aspect_ratio: string;
}

/** Options of {@link startGateway}; each has a default. */
export interface GatewayOptions {
  /** The port to listen on. Default 0: a free one. */
  port?: number;
  /**
   * The address to listen on and to be reached at. Default `127.0.0.1`. Requests must name it (or,
   * on a loopback address, any loopback name such as `localhost`) with the same port in their Host
   * header, a guard against DNS rebinding; on a wildcard (`0.0.0.0`, `::`) any IP literal and this
   * machine's host name are served too, never another name.
   */
  host?: string;
  /**
   * More Host header values to serve, such as a name behind a port forward: `name` (with the port
   * listened on) or `name:port` (exactly). Default none.
   */
  allowedHosts?: readonly string[];
  /**
   * The main account's API key (`gateway.apiKey`), to keep one across restarts: 16 to 256 visible
   * ASCII characters (no spaces or control characters). Default: a fresh random `sk_sim_…` key.
   */
  apiKey?: string;
  /**
   * How deliveries are signed with a webhook's `secret_key`: `'standard-webhooks'` (default),
   * `'svix'`, `'hmac-sha256'`, `'stripe'`, `'unsigned'`, a family with parameters, or a Verifier
   * that can sign (docs/gateway-simulator.md, "Signing").
   */
  signing?: Signing | Verifier;
  /**
   * How each delivery's payload is written: `'default'`, `'flat'`, `'nested'`, `'type-in-header'`,
   * or a function of the default payload (docs/gateway-simulator.md, "Payload shapes").
   */
  payload?: PayloadShape;
  /** Credits of the account `apiKey` belongs to. Default 1,000. */
  credits?: number;
  /** Credits one image costs. Default 10. */
  creditsPerImage?: number;
  /** Accepted models; any non-empty model is accepted when absent. */
  models?: readonly string[];
  /** Requests allowed per API key per window; beyond it 429. Default 1,000 per 60 s; `false` for none. */
  rateLimit?: { requests: number; windowMs: number } | false;
  /**
   * Answer lists (`GET /api/v1/webhooks`) as pages of `pageSize` items, in one of the shapes of
   * docs/gateway-simulator.md ("Paged lists"): `cursor` (default), `pages`, or `unmarked` (the
   * first page only, with nothing that says more exist). Default: one array, no paging.
   */
  lists?: { pageSize: number; style?: ListStyle };
  /** Jobs an account may have pending or processing at once; beyond it 429. Default 10. */
  maxConcurrentJobs?: number;
  jobs?: {
    /** `false`: tasks stay put until `gateway.advanceJob(taskId)`. Default `true`. */
    auto?: boolean;
    /** Time between the steps pending -> processing -> done of an automatic job, in ms. Default 10. */
    stepMs?: number;
    /** How each job ends. Default: failed when the prompt contains "fail", else completed. */
    outcome?: (job: JobRequest) => JobOutcome;
  };
  /**
   * Serve the live console at `<baseUrl>/_console`: webhooks, jobs, deliveries with each attempt,
   * and buttons to submit a job and to redeliver an event (docs/gateway-simulator.md). Off by
   * default; `jobhook gateway` turns it on. `heartbeatMs`: how often its event stream sends a
   * keep-alive comment (default 15,000).
   */
  console?: boolean | { heartbeatMs?: number };
  deliveries?: {
    /**
     * Waits before each retry of a failed attempt, in ms; its length is the number of retries, so
     * `[]` sends each delivery once and never retries.
     */
    retryDelaysMs?: readonly number[];
    /**
     * Which failed attempts are retried: `any-failure` (default): any answer but 2xx, no answer, a
     * time-out; `5xx-or-no-answer`: an answer of 500 or more, no answer, a time-out, while any
     * other answer (a 4xx, a 3xx) ends the delivery as failed.
     */
    retryOn?: 'any-failure' | '5xx-or-no-answer';
    /**
     * The delivery id each attempt carries (`webhook-id`, or the family's id header): `same`
     * (default) on every attempt of a delivery, or `new`: a fresh id on every attempt but the
     * first. The payload's own `id` never changes.
     */
    idOnRetry?: 'same' | 'new';
    /**
     * How long one attempt may take before it counts as failed, in ms. Default 15,000: above a
     * receiver's default `handlerTimeoutMs` (10,000), so its own time-out answer (500, retried)
     * arrives before the simulator gives up (docs/timeouts.md).
     */
    timeoutMs?: number;
    /**
     * Share of deliveries (0 to 1) sent twice at once, both copies with the same `webhook-id` and
     * body and each with its own retries, as an at-least-once sender may do. Default 0.
     */
    duplicateRate?: number;
    /**
     * Share of deliveries (0 to 1) never sent: no attempt at all, as when a gateway gives up or a
     * proxy loses the request, so a test can exercise reconciliation by polling. Each shows in
     * `gateway.dropped` and in the console (state `dropped`); the webhook's counters do not move
     * (nothing was attempted). A `redeliver()` of it sends it. Default 0.
     */
    dropRate?: number;
    /**
     * More certificate authorities (PEM) to trust for `https:` webhook URLs, besides the public
     * ones Node trusts: e.g. the CA of a receiver's test certificate. An attempt to a receiver
     * whose certificate is not trusted fails, with the reason in `last_error`. Default none.
     */
    ca?: string | Buffer | readonly (string | Buffer)[];
  };
}

export interface ResolvedGatewayOptions {
  port: number;
  host: string;
  allowedHosts: readonly string[];
  credits: number;
  creditsPerImage: number;
  models: readonly string[] | undefined;
  rateLimit: { requests: number; windowMs: number } | false;
  lists: ListPaging | undefined;
  maxConcurrentJobs: number;
  autoJobs: boolean;
  stepMs: number;
  outcome: (job: JobRequest) => JobOutcome;
  retryDelaysMs: readonly number[];
  deliveryTimeoutMs: number;
  duplicateRate: number;
  dropRate: number;
  /** The trust store of `https:` deliveries: Node's root certificates and `deliveries.ca`; undefined without `ca`. */
  trustedCa: readonly (string | Buffer)[] | undefined;
  apiKey: string | undefined;
  signing: DeliverySigning;
  payload: PayloadShape;
  retryOn: 'any-failure' | '5xx-or-no-answer';
  idOnRetry: 'same' | 'new';
}

/** Fast by default: the simulator serves tests, where a real gateway's hours-long schedule would stall. */
export const DEFAULT_RETRY_DELAYS_MS = [50, 100, 200, 400, 800] as const;

/** Above a receiver's default handlerTimeoutMs (10 s): see docs/timeouts.md. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 15_000;

/**
 * `jobhook gateway`'s schedule, for a developer's receiver rather than a test: 31 s in all, longer
 * than one handler time-out (10 s by default), so a delivery that met a slow handler (a 500
 * handler_timeout, then 409 while it still runs) is retried after the handler has finished.
 */
export const INTERACTIVE_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 16_000] as const;

const WHERE = 'startGateway';

const GATEWAY_OPTIONS = optionNames<GatewayOptions>()([
  'port',
  'host',
  'allowedHosts',
  'apiKey',
  'signing',
  'payload',
  'credits',
  'creditsPerImage',
  'models',
  'rateLimit',
  'lists',
  'maxConcurrentJobs',
  'jobs',
  'console',
  'deliveries',
]);
const JOBS_OPTIONS = optionNames<NonNullable<GatewayOptions['jobs']>>()(['auto', 'stepMs', 'outcome']);
const DELIVERIES_OPTIONS = optionNames<NonNullable<GatewayOptions['deliveries']>>()([
  'retryDelaysMs',
  'retryOn',
  'idOnRetry',
  'timeoutMs',
  'duplicateRate',
  'dropRate',
  'ca',
]);

export function resolveGatewayOptions(options: GatewayOptions = {}): ResolvedGatewayOptions {
  refuseUnknownOptions(options, GATEWAY_OPTIONS, WHERE);
  refuseUnknownOptions(options.jobs, JOBS_OPTIONS, `${WHERE}'s \`jobs\``);
  refuseUnknownOptions(options.deliveries, DELIVERIES_OPTIONS, `${WHERE}'s \`deliveries\``);
  const { jobs, deliveries } = options;
  const port = wholeNumber(WHERE, 'port', options.port, 0, { min: 0, unit: '0 for a free one' });
  checkOption(WHERE, 'port', port, port <= 65_535, 'a port number, at most 65535');
  const host = options.host ?? '127.0.0.1';
  checkOption(WHERE, 'host', host, typeof host === 'string' && host !== '', 'an address to listen on');
  return {
    port,
    host,
    allowedHosts: hosts(options.allowedHosts),
    credits: nonNegativeNumber(WHERE, 'credits', options.credits, 1000),
    creditsPerImage: nonNegativeNumber(WHERE, 'creditsPerImage', options.creditsPerImage, 10),
    models: options.models,
    rateLimit: rateLimit(options.rateLimit),
    lists: paging(options.lists),
    maxConcurrentJobs: positiveInteger(WHERE, 'maxConcurrentJobs', options.maxConcurrentJobs, 10),
    autoJobs: jobs?.auto ?? true,
    stepMs: nonNegativeNumber(WHERE, 'jobs.stepMs', jobs?.stepMs, 10, { unit: 'ms' }),
    outcome: func(WHERE, 'jobs.outcome', jobs?.outcome) ?? failWhenPromptContains('fail'),
    retryDelaysMs: numberList(
      WHERE,
      'deliveries.retryDelaysMs',
      deliveries?.retryDelaysMs,
      DEFAULT_RETRY_DELAYS_MS,
      {
        unit: 'ms, [] for no retry',
      },
    ),
    deliveryTimeoutMs: positiveNumber(
      WHERE,
      'deliveries.timeoutMs',
      deliveries?.timeoutMs,
      DEFAULT_DELIVERY_TIMEOUT_MS,
      {
        unit: 'ms',
      },
    ),
    duplicateRate: fraction(WHERE, 'deliveries.duplicateRate', deliveries?.duplicateRate, 0),
    dropRate: fraction(WHERE, 'deliveries.dropRate', deliveries?.dropRate, 0),
    trustedCa: trust(deliveries?.ca),
    apiKey: apiKey(options.apiKey),
    signing: resolveSigning(WHERE, 'signing', options.signing),
    payload: payloadShape(options.payload),
    retryOn: oneOf(WHERE, 'deliveries.retryOn', deliveries?.retryOn, 'any-failure', [
      'any-failure',
      '5xx-or-no-answer',
    ]),
    idOnRetry: oneOf(WHERE, 'deliveries.idOnRetry', deliveries?.idOnRetry, 'same', ['same', 'new']),
  };
}

/** What a plausible API key is: the simulator refuses anything else at once, not at the first 401. */
export const API_KEY_RULE = '16 to 256 visible ASCII characters (no spaces or control characters)';

/** Whether `key` is a plausible API key: 16 to 256 characters from `!` to `~`. */
export function isPlausibleApiKey(key: unknown): key is string {
  return typeof key === 'string' && /^[\x21-\x7e]{16,256}$/.test(key);
}

function apiKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  checkOption(WHERE, 'apiKey', value, isPlausibleApiKey(value), API_KEY_RULE);
  return value as string;
}

function payloadShape(value: unknown): PayloadShape {
  if (value === undefined) return 'default';
  const valid = typeof value === 'function' || (PAYLOAD_SHAPES as readonly unknown[]).includes(value);
  const rule = `${PAYLOAD_SHAPES.map((shape) => `"${shape}"`).join(', ')} or a function`;
  checkOption(WHERE, 'payload', value, valid, rule);
  return value as PayloadShape;
}

function rateLimit(value: GatewayOptions['rateLimit']): ResolvedGatewayOptions['rateLimit'] {
  if (value === false) return false;
  if (value === undefined) return { requests: 1000, windowMs: 60_000 };
  return {
    requests: positiveInteger(WHERE, 'rateLimit.requests', value?.requests, undefined),
    windowMs: positiveInteger(WHERE, 'rateLimit.windowMs', value?.windowMs, undefined, 'ms'),
  };
}

/**
 * The default outcome (and the CLI's, with `--fail-when`): jobs whose prompt contains `text` fail,
 * so a test or a demo can ask for a failure without configuring anything.
 */
export function failWhenPromptContains(text: string): (job: JobRequest) => JobOutcome {
  return (job) =>
    job.prompt.includes(text)
      ? { status: 'failed', error: { code: 'generation_failed', message: 'The prompt asked to fail.' } }
      : { status: 'completed' };
}

function hosts(value: readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  const list: unknown = value;
  const valid =
    Array.isArray(list) && list.every((host) => typeof host === 'string' && /^[^\s/]+$/.test(host));
  checkOption(WHERE, 'allowedHosts', value, valid, 'an array of host names (name or name:port)');
  return [...(list as string[])];
}

/** Node's `ca` option replaces its root certificates: keep them, so public receivers still work. */
function trust(
  value: NonNullable<GatewayOptions['deliveries']>['ca'],
): readonly (string | Buffer)[] | undefined {
  if (value === undefined) return undefined;
  const list: unknown[] = Array.isArray(value) ? [...(value as unknown[])] : [value];
  const pem = (item: unknown) =>
    (typeof item === 'string' || Buffer.isBuffer(item)) &&
    item.toString().includes('-----BEGIN CERTIFICATE-----');
  const valid = list.length > 0 && list.every(pem);
  checkOption(
    WHERE,
    'deliveries.ca',
    value,
    valid,
    'PEM certificates (a string, a Buffer or a list of them)',
  );
  return [...rootCertificates, ...(list as (string | Buffer)[])];
}

function paging(value: GatewayOptions['lists']): ListPaging | undefined {
  if (value === undefined) return undefined;
  return {
    pageSize: positiveInteger(WHERE, 'lists.pageSize', value?.pageSize, undefined),
    style: oneOf(WHERE, 'lists.style', value?.style, 'cursor', ['cursor', 'pages', 'unmarked']),
  };
}
