// The simulator's options and the defaults it picks where the gateway document is silent; each is
// written down in docs/gateway-simulator.md: keep the two in step.
import { rootCertificates } from 'node:tls';
import {
  optionChecks,
  resolveSigning,
  type DeliverySigning,
  type Signing,
  type Verifier,
} from 'jobhook/extend';
import { PAYLOAD_SHAPES, type PayloadShape } from './payload-shapes.js';
import { foreignSchemeOf, foreignSigner, type ForeignScheme } from './foreign-signing.js';
import type { ListPaging, ListStyle } from './webhooks.js';

const {
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
} = optionChecks;

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
  /** The address to listen on, which requests must name in their Host header. Default `127.0.0.1`. */
  host?: string;
  /** More Host values to serve (a name behind a port forward): `name` or `name:port`. Default none. */
  allowedHosts?: readonly string[];
  /** The main account's API key (16 to 256 visible ASCII characters). Default: a fresh `sk_sim_…` key. */
  apiKey?: string;
  /**
   * How deliveries are signed with a webhook's `secret_key`. Default `'standard-webhooks'`;
   * `'hmac-sha512'` and `'slack-v0'` sign in schemes jobhook has no verifier for.
   */
  signing?: Signing | Verifier | ForeignScheme | { scheme: ForeignScheme };
  /** How each delivery's payload is written. Default `'default'`. */
  payload?: PayloadShape;
  /** Credits of the account `apiKey` belongs to. Default 1,000. */
  credits?: number;
  /** Credits one image costs. Default 10. */
  creditsPerImage?: number;
  /** Accepted models; any non-empty model is accepted when absent. */
  models?: readonly string[];
  /** Requests allowed per API key per window; beyond it 429. Default 1,000 per 60 s; `false` for none. */
  rateLimit?: { requests: number; windowMs: number } | false;
  /** Answer `GET /api/v1/webhooks` in pages of `pageSize` (`style` default `cursor`). Default: one array. */
  lists?: { pageSize: number; style?: ListStyle };
  /** Jobs an account may have pending or processing at once; beyond it 429. Default 10. */
  maxConcurrentJobs?: number;
  jobs?: {
    /** `false`: tasks stay put until `gateway.advanceJob(taskId)`. Default `true`. */
    auto?: boolean;
    /** Time between the steps pending -> processing -> done, in ms. Default 10. */
    stepMs?: number;
    /** How each job ends. Default: failed when the prompt contains "fail", else completed. */
    outcome?: (job: JobRequest) => JobOutcome;
  };
  /** Serve the live console at `<baseUrl>/_console` (`heartbeatMs` of its stream: 15,000). Default off. */
  console?: boolean | { heartbeatMs?: number };
  deliveries?: {
    /** Waits before each retry, in ms: `[]` sends each delivery once. Default 50, 100, 200, 400, 800. */
    retryDelaysMs?: readonly number[];
    /** `any-failure` (default): anything but 2xx is retried; `5xx-or-no-answer`: a 4xx or 3xx ends it. */
    retryOn?: 'any-failure' | '5xx-or-no-answer';
    /** The delivery id on each attempt: `same` (default), or `new` after the first. */
    idOnRetry?: 'same' | 'new';
    /** One attempt's time-out, in ms. Default 15,000, above a receiver's handler time-out (10,000). */
    timeoutMs?: number;
    /** Share of deliveries (0 to 1) sent twice at once, as an at-least-once sender may. Default 0. */
    duplicateRate?: number;
    /** Share of deliveries (0 to 1) never sent, to test reconciliation; see `gateway.dropped`. Default 0. */
    dropRate?: number;
    /** More certificate authorities (PEM) to trust for `https:` webhook URLs. Default none. */
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
  /** Node's root certificates and `deliveries.ca`; undefined without `ca`. */
  trustedCa: readonly (string | Buffer)[] | undefined;
  apiKey: string | undefined;
  signing: DeliverySigning;
  payload: PayloadShape;
  retryOn: 'any-failure' | '5xx-or-no-answer';
  idOnRetry: 'same' | 'new';
}

/** Fast: the simulator serves tests, where a real gateway's hours-long schedule would stall. */
export const DEFAULT_RETRY_DELAYS_MS = [50, 100, 200, 400, 800] as const;

export const DEFAULT_DELIVERY_TIMEOUT_MS = 15_000;

/** `jobhook gateway`'s: 31 s in all, so a delivery that met a slow handler is retried once it is done. */
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
    signing: signingOf(options.signing),
    payload: payloadShape(options.payload),
    retryOn: oneOf(WHERE, 'deliveries.retryOn', deliveries?.retryOn, 'any-failure', [
      'any-failure',
      '5xx-or-no-answer',
    ]),
    idOnRetry: oneOf(WHERE, 'deliveries.idOnRetry', deliveries?.idOnRetry, 'same', ['same', 'new']),
  };
}

/** The simulator refuses any other key at once, not at the first 401. */
export const API_KEY_RULE = '16 to 256 visible ASCII characters (no spaces or control characters)';

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

/** Jobs whose prompt contains `text` fail: the default outcome, and the CLI's `--fail-when`. */
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

// Node's `ca` option replaces its root certificates: they are kept, for public receivers.
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

/** `signing`: one of the library's schemes, or a foreign one the simulator signs in itself. */
function signingOf(signing: GatewayOptions['signing']): DeliverySigning {
  const foreign = foreignSchemeOf(signing);
  return resolveSigning(WHERE, 'signing', foreign ? foreignSigner(foreign) : signing);
}
