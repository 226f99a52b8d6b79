import { JobhookError } from '../common/errors.js';
import { isRecord } from '../common/values.js';
import { messageOf, safeLogger, type Logger } from '../common/logging.js';
import { redactor, type Redact } from '../common/redaction.js';
import {
  checkOption,
  func,
  httpUrlOption,
  invalidOption,
  optionNames,
  positiveInteger,
  positiveNumber,
  refuseUnknownOptions,
} from '../common/option-checks.js';
import { JOB_TRACKER } from '../tracker/job-tracker.js';
import { invalidResponse } from './errors.js';
import { markIncomplete, readPages } from './pages.js';
import { registerWebhook, type RegisterWebhookOptions, type RegisterWebhookResult } from './register.js';
import { createTransport, type RequestOptions } from './request.js';
import { resolveRetry, type RetryOptions } from './retry.js';
import { resolveWaitOptions, waitService, type CompletedImageTask, type WaitOptions } from './wait-for.js';
import { requireSupportedNode } from '../runtime/node-version.js';
import type { JobTracker } from '../tracker/job-tracker.js';
import type {
  ApiKey,
  Balances,
  CreateKeyInput,
  CreateWebhookInput,
  GenerateImageInput,
  GenerateImageResult,
  ImageTask,
  Webhook,
} from './types.js';

// The client loads no platform code of its own, so it checks the Node version itself.
requireSupportedNode();

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Sent as `Authorization: Bearer <apiKey>`: printable ASCII, no spaces (a trailing newline is refused). */
  apiKey: string;
  /** The gateway's `{base_url}`; paths `/api/v1/...` are appended to it. */
  baseUrl: string;
  /** A fetch implementation (a proxy agent, a test double). Default: the global fetch. */
  fetch?: typeof fetch;
  /** Time allowed for one attempt, in ms. Default 30,000. */
  timeoutMs?: number;
  /** Retries of GET and DELETE on 429, 5xx, lost connections and time-outs. Default 2; 0 for none. */
  retries?: number | RetryOptions;
  /** Longest answer body read, in bytes; past it a GatewayResponseTooLargeError. Default 10 MiB. */
  maxResponseBytes?: number;
  /** Records each submitted task, so that a receiver with `reconcile` polls it if its webhook never comes. */
  jobs?: JobTracker;
  /** Where the client warns (a tracker that failed). Default `console`. */
  logger?: Logger;
  /** The tenant this client's jobs belong to, on a receiver whose `secret` function names tenants. */
  tenant?: string;
}

const CLIENT_OPTIONS = optionNames<ClientOptions>()([
  'apiKey',
  'baseUrl',
  'fetch',
  'timeoutMs',
  'retries',
  'maxResponseBytes',
  'jobs',
  'logger',
  'tenant',
]);

/** The gateway's API, one method per endpoint, made by {@link createClient}. */
export interface GatewayClient {
  keys: {
    /** POST /api/v1/keys. Store `api_key` at once: it is returned only this time. */
    create(input: CreateKeyInput, options?: RequestOptions): Promise<ApiKey & { api_key: string }>;
  };
  webhooks: {
    /** POST /api/v1/webhooks */
    create(input: CreateWebhookInput, options?: RequestOptions): Promise<Webhook>;
    /** GET /api/v1/webhooks, every page of it: at most 10,000 webhooks (docs/client.md). */
    list(options?: RequestOptions): Promise<Webhook[]>;
    /** DELETE /api/v1/webhooks/{id} */
    delete(id: number, options?: RequestOptions): Promise<{ id: number }>;
    /** Creates or reuses the one webhook for `options.url`: see {@link registerWebhook}. */
    register(options: RegisterWebhookOptions): Promise<RegisterWebhookResult>;
  };
  images: {
    /** POST /api/v1/images/generate. Never retried by default: a re-sent POST could charge twice. */
    generate(input: GenerateImageInput, options?: RequestOptions): Promise<GenerateImageResult>;
    /** GET /api/v1/images/{task_id} */
    get(taskId: string, options?: RequestOptions): Promise<ImageTask>;
    /**
     * Resolves once the task completed, from the `receiver`'s webhook or by polling; rejects with a
     * `JobFailedError`, a `WaitTimeoutError` or a poll's `GatewayError` (docs/client.md).
     */
    waitFor(taskId: string, options?: WaitOptions): Promise<CompletedImageTask>;
    /** `generate` (never re-sent), then `waitFor` its task; `timeoutMs` counts from this call. */
    generateAndWait(input: GenerateImageInput, options?: WaitOptions): Promise<CompletedImageTask>;
  };
  account: {
    /** GET /api/v1/account/balances */
    balances(options?: RequestOptions): Promise<Balances>;
  };
}

const WHERE = 'createClient';

/** A client for the gateway's API. Every failure rejects with a GatewayError. */
export function createClient(options: ClientOptions): GatewayClient {
  if (typeof options !== 'object' || options === null) {
    throw invalidOption(WHERE, 'options', 'an object with `apiKey` and `baseUrl`', options);
  }
  refuseUnknownOptions(options, CLIENT_OPTIONS, 'createClient', {
    secret: 'it belongs in `createReceiver({ secret })`',
    onRetry: "it belongs in webhooks.register's `startupRetries: { onRetry }`",
  });
  const apiKey = checkApiKey(options.apiKey);
  const base = httpUrlOption(WHERE, 'baseUrl', options.baseUrl, 'https://gateway.example.com');
  const fetchImpl = func(WHERE, 'fetch', options.fetch) ?? globalThis.fetch.bind(globalThis);
  // The gateway may echo the key back: every error built from its answers goes through this.
  const redactKey = redactor([apiKey]);
  const baseUrl = base.href.replace(/\/+$/, '');
  const request = createTransport({
    apiKey,
    redactKey,
    baseUrl,
    fetch: fetchImpl,
    timeoutMs: positiveNumber(WHERE, 'timeoutMs', options.timeoutMs, 30_000, { unit: 'ms' }),
    retry: resolveRetry(options.retries, WHERE),
    maxResponseBytes: positiveInteger(
      WHERE,
      'maxResponseBytes',
      options.maxResponseBytes,
      10 * 1024 * 1024,
      'bytes',
    ),
  });

  async function getImage(taskId: string, requestOptions?: RequestOptions): Promise<ImageTask> {
    const path = `/api/v1/images/${encodeURIComponent(taskId)}`;
    const task = await request<unknown>('GET', path, undefined, requestOptions);
    // The envelope allows `data` to be absent: a caller reading `task.status` must get a record.
    if (!isRecord(task)) throw invalidResponse(`GET ${path}`, 'the answer holds no task record');
    return task as ImageTask;
  }
  const { jobs, tenant } = options;
  const named = tenant === undefined || (typeof tenant === 'string' && tenant.length > 0);
  checkOption(
    WHERE,
    'tenant',
    tenant,
    named,
    'the name your `secret` function gives the tenant, a non-empty string',
  );
  const { waitFor } = waitService(getImage, redactKey, tenant);
  const tracker = jobs === undefined || (typeof jobs === 'object' && typeof jobs?.track === 'function');
  checkOption(WHERE, 'jobs', jobs, tracker, JOB_TRACKER);
  const track = submissionTracker(options.jobs, options.logger, redactKey, tenant);

  const client: GatewayClient = {
    keys: {
      create: (input, requestOptions) => request('POST', '/api/v1/keys', input, requestOptions),
    },
    webhooks: {
      create: (input, requestOptions) => request('POST', '/api/v1/webhooks', input, requestOptions),
      async list(requestOptions) {
        const path = '/api/v1/webhooks';
        const budget = { bytes: 0 };
        const get = (query: string) =>
          request<unknown>('GET', path + query, undefined, requestOptions, budget);
        const { items, complete } = await readPages<Webhook>(get, path, baseUrl);
        return complete ? items : markIncomplete(items);
      },
      delete: (id, requestOptions) =>
        request('DELETE', `/api/v1/webhooks/${encodeURIComponent(String(id))}`, undefined, requestOptions),
      register: (registerOptions) => registerWebhook(client, registerOptions),
    },
    images: {
      generate: (input, requestOptions) =>
        request<GenerateImageResult>('POST', '/api/v1/images/generate', input, requestOptions).then(track),
      get: getImage,
      waitFor: (taskId, waitOptions) => waitFor(taskId, waitOptions),
      async generateAndWait(input, waitOptions = {}) {
        const startedAt = Date.now();
        resolveWaitOptions(waitOptions); // a bad option fails before any credit is spent
        const submitted = await request<GenerateImageResult>('POST', '/api/v1/images/generate', input, {
          ...(waitOptions.signal && { signal: waitOptions.signal }),
        }).then(track);
        return waitFor(submitted.task_id, waitOptions, { startedAt, pollAtOnce: false });
      },
    },
    account: {
      balances: (requestOptions) => request('GET', '/api/v1/account/balances', undefined, requestOptions),
    },
  };
  return client;
}

/**
 * fetch refuses a header with a line break (quoting the key in its error) and trims whitespace (so
 * an echo would escape redaction): the message names the kind of character, never the key.
 */
function checkApiKey(apiKey: unknown): string {
  const rule = 'the API key: printable ASCII with no spaces';
  checkOption('createClient', 'apiKey', apiKey, typeof apiKey === 'string' && apiKey.length > 0, rule);
  const fault = apiKeyFault(apiKey as string);
  if (fault !== undefined) {
    throw new JobhookError(
      'invalid_options',
      `createClient: \`apiKey\` must be ${rule}; got a string that ${fault}. Check how it is read.`,
    );
  }
  return apiKey as string;
}

function apiKeyFault(apiKey: string): string | undefined {
  if (/^\s|\s$/.test(apiKey)) {
    return 'has whitespace at its start or end (a line break from a file or an environment variable?): trim it';
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(apiKey)) return 'contains a line break or another control character';
  if (/\s/.test(apiKey)) return 'contains a space';
  if (/[^\u0021-\u007e]/.test(apiKey)) {
    return 'contains a character outside ASCII (a typographic quote or an invisible space?)';
  }
  return undefined;
}

/** The credits are spent by then: a tracker that fails is logged, naming the task, never thrown. */
function submissionTracker(
  jobs: JobTracker | undefined,
  logger: Logger | undefined,
  redact: Redact,
  tenant: string | undefined,
) {
  const log = safeLogger(
    logger ?? { error: (message) => console.error(message), warn: (message) => console.warn(message) },
  );
  return async function track(submitted: GenerateImageResult): Promise<GenerateImageResult> {
    if (!jobs || typeof submitted?.task_id !== 'string') return submitted;
    try {
      await (tenant === undefined
        ? jobs.track(submitted.task_id)
        : jobs.track(submitted.task_id, undefined, tenant));
    } catch (error) {
      log.warn(
        redact(
          `jobhook: task ${JSON.stringify(submitted.task_id)} was submitted but the job tracker could not ` +
            `record it (${messageOf(error)}); it will not be polled unless tracked again with jobs.track().`,
        ),
      );
    }
    return submitted;
  };
}
