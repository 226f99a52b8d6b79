import { createAccount, createKey, postKey, rateLimiter } from './accounts.js';
import { resolveGatewayOptions, type GatewayOptions, type JobOutcome } from './config.js';
import { chosenOutcomes } from './console/actions.js';
import { CONSOLE_PATH, consoleHandler, type ConsoleHandler } from './console/handler.js';
import { consoleSnapshot } from './console/snapshot.js';
import { deliveryLog, deliveryService, type DeliveryAttempt, type DroppedDelivery } from './deliveries.js';
import { balances, imageService } from './images.js';
import { GatewayFailure, route } from './routes.js';
import { callRoute, listen, type RecordedRequest } from './server.js';
import { activityTracker, changeSignal, createState, type TaskRecord, type WebhookRecord } from './state.js';
import { deleteWebhook, listWebhooks, postWebhook } from './webhooks.js';

/** A failure the next matching requests get instead of their answer, to test a client's handling. */
export interface InjectedFailure {
  /** Default 500. */
  status?: number;
  /** Default: `rate_limited` for 429, `internal_error` otherwise. */
  code?: string;
  /** How many requests fail. Default 1. */
  times?: number;
  /** Sent as the Retry-After header, in seconds. */
  retryAfterSeconds?: number;
  /** Only requests with this method. */
  method?: string;
  /** Only requests to this path (e.g. `/api/v1/webhooks`). */
  path?: string;
}

/** A running gateway simulator, made by {@link startGateway}. */
export interface Gateway {
  /** Append `/api/v1/...` to it; requests to any other host are refused (403). */
  readonly baseUrl: string;
  /** A key of an approved account with `credits` credits: the `apiKey` option, or a fresh one. */
  readonly apiKey: string;
  /** The numeric id of `apiKey`, for a webhook's `api_key_id`. */
  readonly apiKeyId: number;
  /** A valid key of an account whose API access is not approved: every request gets 403. */
  readonly unapprovedApiKey: string;
  /** The live console's address (`<baseUrl>/_console`), when started with `console: true`. */
  readonly consoleUrl: string | undefined;
  /** Every attempt to deliver an event, in order. */
  readonly deliveries: readonly DeliveryAttempt[];
  /** Every delivery never sent on purpose (`deliveries.dropRate`), in order. */
  readonly dropped: readonly DroppedDelivery[];
  /** Every request the simulator answered, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Adds another account (approved unless told otherwise) and returns its key. */
  createAccount(options?: { approved?: boolean; credits?: number }): { apiKey: string; apiKeyId: number };
  /** Moves a task one step (pending -> processing -> its outcome), for `jobs: { auto: false }`. */
  advanceJob(taskId: string, outcome?: JobOutcome): { task_id: string; status: string };
  /** Sends a delivery (by its `webhook-id`) again: same body and id, new attempts; throws if unknown. */
  redeliver(deliveryId: string): void;
  /** Makes the next matching requests fail. */
  failNext(failure?: InjectedFailure): void;
  /** The server-side record of a webhook (including secret_key), for assertions. */
  webhook(id: number): Readonly<WebhookRecord> | undefined;
  /** Resolves once no automatic job and no delivery (including scheduled retries) is left. */
  settled(): Promise<void>;
  /** Stops the server, cancels pending jobs and deliveries. */
  close(): Promise<void>;
}

/** Starts an in-memory gateway, by default on 127.0.0.1 with a free port (`host`, `port`). */
export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const outcomes = chosenOutcomes(resolveGatewayOptions(options));
  const config = outcomes.config;
  const state = createState();
  const activity = activityTracker();
  const changes = changeSignal();
  const log = deliveryLog();
  const deliveries: DeliveryAttempt[] = [];
  const dropped: DroppedDelivery[] = [];
  const requests: RecordedRequest[] = [];
  const injected: (InjectedFailure & { times: number })[] = [];
  const limit = rateLimiter(config.rateLimit);
  const { dispatch, redeliver } = deliveryService({
    state,
    options: config,
    activity,
    attempts: deliveries,
    dropped,
    log,
    changes,
  });
  const images = imageService(
    state,
    config,
    activity,
    (task: TaskRecord) => dispatch(task),
    () => changes.notify(),
  );

  // Every route may change what the console shows: its watchers are told after each.
  const routes = [
    route('POST', '/api/v1/keys', postKey),
    route('POST', '/api/v1/webhooks', postWebhook(config.signing)),
    route('GET', '/api/v1/webhooks', listWebhooks(config.lists)),
    route('DELETE', '/api/v1/webhooks/:id', deleteWebhook),
    route('POST', '/api/v1/images/generate', images.generate),
    route('GET', '/api/v1/images/:task_id', images.get),
    route('GET', '/api/v1/account/balances', balances),
  ].map((r) => ({
    ...r,
    handler: (context: Parameters<typeof r.handler>[0]) => {
      try {
        return r.handler(context);
      } finally {
        changes.notify();
      }
    },
  }));

  function beforeRoute(method: string, path: string, key: { id: number }) {
    limit(key.id);
    const index = injected.findIndex(
      (f) => (!f.method || f.method === method) && (!f.path || f.path === path),
    );
    if (index === -1) return;
    const failure = injected[index]!;
    if (--failure.times <= 0) injected.splice(index, 1);
    const status = failure.status ?? 500;
    throw new GatewayFailure(
      status,
      failure.code ?? (status === 429 ? 'rate_limited' : 'internal_error'),
      status === 429 ? 'Rate limit exceeded; retry later.' : 'Internal server error.',
      failure.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failure.retryAfterSeconds) },
    );
  }

  const main = createAccount(state, { approved: true, credits: config.credits });
  const mainKey = createKey(state, main.id, 'simulator', config.apiKey);
  const unapproved = createAccount(state, { approved: false, credits: config.credits });
  const unapprovedKey = createKey(state, unapproved.id, 'simulator (not approved)');

  let baseUrl = '';
  const api = { state, routes, beforeRoute };
  let gatewayConsole: ConsoleHandler | undefined;
  if (options.console) {
    gatewayConsole = consoleHandler({
      changes,
      snapshot: (key) => consoleSnapshot(baseUrl, state, log, key),
      mainKey,
      keyFor: (apiKey) => state.keys.get(apiKey),
      api: (key, method, path, body = {}) => {
        const account = state.accounts.get(key.account_id)!;
        return callRoute(api, { method, path, key, account, body: () => Promise.resolve(body) });
      },
      model: config.models?.[0] ?? 'console',
      choose: (taskId, outcome) => outcomes.choose(taskId, outcome),
      redeliver,
      heartbeatMs: (options.console === true ? undefined : options.console.heartbeatMs) ?? 15_000,
    });
  }
  const { server, host } = await listen({ ...api, requests, intercept: gatewayConsole?.handle }, config);
  baseUrl = `http://${host}`;

  return {
    baseUrl,
    apiKey: mainKey.api_key,
    apiKeyId: mainKey.id,
    unapprovedApiKey: unapprovedKey.api_key,
    consoleUrl: gatewayConsole ? `${baseUrl}${CONSOLE_PATH}` : undefined,
    redeliver(deliveryId) {
      redeliver(deliveryId);
    },
    deliveries,
    dropped,
    requests,
    createAccount(accountOptions = {}) {
      const account = createAccount(state, {
        approved: accountOptions.approved ?? true,
        credits: accountOptions.credits ?? config.credits,
      });
      const key = createKey(state, account.id, 'simulator');
      return { apiKey: key.api_key, apiKeyId: key.id };
    },
    advanceJob(taskId, outcome) {
      const { task_id, status } = images.advance(taskId, outcome);
      return { task_id, status };
    },
    failNext(failure = {}) {
      injected.push({ ...failure, times: failure.times ?? 1 });
    },
    webhook: (id) => state.webhooks.get(id),
    settled: () => activity.settled(),
    async close() {
      gatewayConsole?.close();
      activity.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await activity.settled();
    },
  };
}

export type { GatewayOptions, JobOutcome, JobRequest } from './config.js';
export type { DeliveryAttempt, DroppedDelivery } from './deliveries.js';
export type { RecordedRequest } from './server.js';
export type { WebhookRecord } from './state.js';
export type { ForeignScheme } from './foreign-signing.js';
