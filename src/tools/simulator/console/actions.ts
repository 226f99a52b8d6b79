import type { IncomingMessage } from 'node:http';
import { BodyReadError, limitsWithin, readRequestBody, messageOf } from 'jobhook/extend';
import type { JobOutcome, ResolvedGatewayOptions } from '../config.js';
import type { ApiKeyRecord } from '../state.js';

/** A refusal in the console's own JSON, `{ error: { code, message } }`. */
export class ConsoleFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the console's actions do, each as the API would. */
export interface ConsoleOperations {
  /** An API operation as `key`, through the API's checks; throws a GatewayFailure when refused. */
  api(
    key: ApiKeyRecord,
    method: 'POST' | 'DELETE',
    path: string,
    body?: Record<string, unknown>,
  ): Promise<unknown>;
  /** The model of a job submitted from the console. */
  model: string;
  /** Makes a task end as chosen, whatever `jobs.outcome` says. */
  choose(taskId: string, outcome: JobOutcome): void;
  /** Sends a delivery of `accountId` again (same `webhook-id`, new attempts); throws when it cannot. */
  redeliver(deliveryId: string, accountId: number): { number: number };
}

const MAX_BODY_BYTES = 16 * 1024;
const BODY_TIMEOUT_MS = 10_000;

/**
 * The console's actions: submit a job, create an API key, create or delete a webhook, redeliver.
 * Each acts as `key` through the checks of the API call it stands for; undefined for no action.
 */
export async function consoleAction(
  operations: ConsoleOperations,
  req: IncomingMessage,
  route: string,
  host: string,
  key: ApiKeyRecord,
): Promise<unknown> {
  const method = (req.method ?? 'GET').toUpperCase();
  if (route === '/jobs') {
    allow(method, 'POST');
    const body = await actionBody(req, host);
    const outcome = body.outcome ?? 'completed';
    if (outcome !== 'completed' && outcome !== 'failed') {
      throw new ConsoleFailure(400, 'invalid_request', 'outcome must be "completed" or "failed".');
    }
    const job = (await operations.api(key, 'POST', '/api/v1/images/generate', {
      model: operations.model,
      prompt: body.prompt,
    })) as { task_id: string };
    operations.choose(
      job.task_id,
      outcome === 'completed'
        ? { status: 'completed' }
        : { status: 'failed', error: { code: 'generation_failed', message: 'Failed from the console.' } },
    );
    return { task_id: job.task_id };
  }
  if (route === '/keys') {
    allow(method, 'POST');
    const { title } = await actionBody(req, host);
    return operations.api(key, 'POST', '/api/v1/keys', { title });
  }
  if (route === '/webhooks') {
    allow(method, 'POST');
    const { url, events, secret_key, api_key_id } = await actionBody(req, host);
    return operations.api(key, 'POST', '/api/v1/webhooks', { url, events, secret_key, api_key_id });
  }
  const webhook = /^\/webhooks\/([^/]+)$/.exec(route);
  if (webhook) {
    allow(method, 'DELETE');
    sameOrigin(req, host);
    req.resume();
    return operations.api(key, 'DELETE', `/api/v1/webhooks/${webhook[1]!}`);
  }
  const redelivery = /^\/deliveries\/([^/]+)\/redeliver$/.exec(route);
  if (redelivery) {
    allow(method, 'POST');
    await actionBody(req, host);
    let deliveryId = redelivery[1]!;
    try {
      deliveryId = decodeURIComponent(deliveryId);
      return { deliveryId, number: operations.redeliver(deliveryId, key.account_id).number };
    } catch (error) {
      throw new ConsoleFailure(404, 'not_found', messageOf(error));
    }
  }
  return undefined;
}

export function allow(method: string, allowed: 'GET' | 'POST' | 'DELETE') {
  if (method !== allowed) throw new ConsoleFailure(405, 'method_not_allowed', `Use ${allowed} here.`);
}

/**
 * The page an action comes from must be the console's own. A cross-site form cannot send JSON or
 * DELETE, and a cross-site fetch that does is preflighted, which the console never approves.
 */
function sameOrigin(req: IncomingMessage, host: string) {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) {
    throw new ConsoleFailure(403, 'forbidden', 'Console actions are accepted from the console page only.');
  }
}

async function actionBody(req: IncomingMessage, host: string): Promise<Record<string, unknown>> {
  sameOrigin(req, host);
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    throw new ConsoleFailure(415, 'unsupported_media_type', 'Content-Type must be application/json.');
  }
  const limits = limitsWithin(MAX_BODY_BYTES, BODY_TIMEOUT_MS);
  let bytes: Uint8Array;
  try {
    bytes = await readRequestBody(req, limits);
  } catch (error) {
    // Node reads and drops the rest, so the browser's connection carries its next request.
    req.resume();
    if (error instanceof BodyReadError && error.reason === 'too_large') {
      throw new ConsoleFailure(413, 'too_large', 'The body is too large.');
    }
    if (limits.signal?.aborted) throw new ConsoleFailure(408, 'request_timeout', 'The body came too slowly.');
    throw new ConsoleFailure(400, 'invalid_request', 'The body could not be read to its end.');
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes) || '{}');
  } catch {
    throw new ConsoleFailure(400, 'invalid_request', 'The body is not valid JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ConsoleFailure(400, 'invalid_request', 'The body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

/**
 * Lets the console decide how one job ends without touching `jobs.outcome`: a choice made for a
 * task id wins once, every other job ends as configured.
 */
export function chosenOutcomes(config: ResolvedGatewayOptions) {
  const chosen = new Map<string, JobOutcome>();
  return {
    config: {
      ...config,
      outcome: (job) => {
        const outcome = chosen.get(job.task_id);
        if (!outcome) return config.outcome(job);
        chosen.delete(job.task_id);
        return outcome;
      },
    } satisfies ResolvedGatewayOptions,
    choose(taskId: string, outcome: JobOutcome): void {
      chosen.set(taskId, outcome);
    },
  };
}
