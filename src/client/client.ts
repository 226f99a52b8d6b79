import {
  isRecord,
  checkOption,
  func,
  invalidOption,
  optionNames,
  positiveInteger,
  positiveNumber,
  refuseUnknownOptions,
} from '../common/errors.js';
import { redactor, type Logger } from '../common/logging.js';
import { JOB_TRACKER, type JobTracker } from '../tracker/job-tracker.js';
import { invalidResponse } from './errors.js';
import { markIncomplete, readPages } from './pages.js';
import { registerWebhook, type RegisterWebhookOptions, type RegisterWebhookResult } from './register.js';
import { checkApiKey } from './options.js';
import { createTransport, type RequestOptions } from './request.js';
import { resolveRetry, type RetryOptions } from './retry.js';
import { resolveWaitOptions, waitService, type CompletedImageTask, type WaitOptions } from './wait-for.js';
import { requireSupportedNode } from '../runtime/node-version.js';
import { submissionTracker } from './track.js';
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

// The client loads no platform code of its own: the Node version is checked here (nothing happens
// on other runtimes).
requireSupportedNode();

/** Options of {@link createClient}. */
export interface ClientOptions {
  /**
   * Sent as `Authorization: Bearer <apiKey>`. Keep it on the server. Printable ASCII with no
   * spaces: a key with a line break, a control character, whitespace at either end (read from a
   * file with its newline, say) or a character outside ASCII is refused at once.
   */
  apiKey: string;
  /** The gateway's `{base_url}`; paths `/api/v1/...` are appended to it. */
  baseUrl: string;
  /** A fetch implementation (a proxy agent, a test double). Default: the global fetch. */
  fetch?: typeof fetch;
  /** Time allowed for one attempt, in ms. Default 30,000. */
  timeoutMs?: number;
  /** Retries of GET and DELETE on 429, 5xx, lost connections and time-outs. Default 2; 0 for none. */
  retries?: number | RetryOptions;
  /**
   * Longest answer body the client reads, in bytes; a longer one fails with a
   * GatewayResponseTooLargeError (`response_too_large`) without being buffered. Default 10 MiB.
   */
  maxResponseBytes?: number;
  /**
   * A job tracker (`memoryJobTracker()`, `redisJobTracker`, `postgresJobTracker`): each task this
   * client submits is recorded in it, so that a receiver with `reconcile` polls its status if the
   * webhook never comes. A tracker that fails never fails the submission: it is logged at warn.
   */
  jobs?: JobTracker;
  /** Where the client warns (a tracker that failed). Default `console`. */
  logger?: Logger;
  /**
   * The tenant this client's jobs belong to, on a receiver whose `secret` function names tenants
   * (`{ tenant, secret }`): each task it submits is tracked for this tenant, and its waits take
   * results from that tenant's deliveries only. Leave it out on a receiver with one secret.
   */
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
    /**
     * GET /api/v1/webhooks: an array of every webhook, whether the gateway answers with one or
     * with pages of `{ items }`: the pages it recognises are followed (src/client/pages.ts lists
     * them). A list it cannot tell is complete makes `register()` warn before it creates. One
     * listing keeps at most 10,000 webhooks and `maxResponseBytes` of pages in all: past either it
     * fails with a GatewayError `listing_too_large`.
     */
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
     * Resolves with the task once it has completed: from the `receiver`'s webhook delivery when
     * one is given, else (and always as a safety net) by polling `get` with backoff. Rejects with
     * a `JobFailedError` when the job failed, a `WaitTimeoutError` past `timeoutMs` (the job goes
     * on), the signal's reason on abort, or the `GatewayError` of a poll that cannot pass (401,
     * 404). See "Waiting for a job" in docs/client.md.
     */
    waitFor(taskId: string, options?: WaitOptions): Promise<CompletedImageTask>;
    /**
     * `generate` (never re-sent), then `waitFor` the task it created: submit a job and get its
     * image. `timeoutMs` counts from this call; the first poll comes one `pollIntervalMs` after
     * the submission, since the job has only just started.
     */
    generateAndWait(input: GenerateImageInput, options?: WaitOptions): Promise<CompletedImageTask>;
  };
  account: {
    /** GET /api/v1/account/balances */
    balances(options?: RequestOptions): Promise<Balances>;
  };
}

const WHERE = 'createClient';

/** An absolute URL, or undefined for anything else. */
function urlOf(value: unknown): URL | undefined {
  try {
    return new URL(value as string);
  } catch {
    return undefined;
  }
}

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
  const base = urlOf(options.baseUrl);
  checkOption(
    WHERE,
    'baseUrl',
    options.baseUrl,
    base !== undefined,
    'the gateway address, such as https://gateway.example.com',
  );
  const fetchImpl = func(WHERE, 'fetch', options.fetch) ?? globalThis.fetch.bind(globalThis);
  // Whatever the gateway sends may quote the key (an echoed Authorization header): every error
  // built from it, in the transport and in waits, goes through this one redaction.
  const redactKey = redactor([apiKey]);
  const baseUrl = base!.href.replace(/\/+$/, '');
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
