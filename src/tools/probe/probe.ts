/**
 * `jobhook probe`: learns what the gateway's document leaves unstated by watching it. It listens,
 * registers a temporary webhook for both events with a fresh secret, submits one job (and one
 * meant to fail, when asked), captures the deliveries (answering 500 for a while, to watch the
 * retries), finds the signature, the payload's paths and the retry delays, checks that a receiver
 * made with the contract it found handles the delivery, and deletes the webhook, whatever happens.
 */
import { randomBytes } from 'node:crypto';
import { JobFailedError, WaitTimeoutError, type GatewayClient, type ImageTask } from 'jobhook/client';
import { createReceiver, GATEWAY_EVENT_TYPES, type JobCompletedEvent, type JobFailedEvent } from 'jobhook';
import { detectPayload, type PayloadFinding } from './detect-payload.js';
import { detectSignature, type SignatureFinding } from './detect-signature.js';
import { startListener, type CapturedDelivery, type ProbeListener } from './listener.js';
import { contractOf, typescriptOf, type ContractCheck, type ProbeReport } from './report.js';
import { retryFinding, type RetryFinding } from './listener.js';
import { isRecord, pathReader, readHeaders, messageOf } from 'jobhook/extend';

export interface ProbeOptions {
  /** A client of the gateway to probe. */
  client: GatewayClient;
  /** The gateway's base URL, for the report. */
  baseUrl?: string;
  /** Where to listen. Default 127.0.0.1 and a free port. */
  host?: string;
  port?: number;
  /** The URL the gateway reaches the listener at. Default `http://<host>:<port>/`. */
  publicUrl?: string;
  /** The job to submit. Default model `default`, a plain prompt, ratio 1:1. */
  job?: { model?: string; prompt?: string; aspectRatio?: string };
  /** Also submit a job with this prompt, meant to fail, to see a `job.failed` delivery. */
  failPrompt?: string;
  /** Answer the job's deliveries 500 for this long from the first, then 200: the retries are measured. */
  retriesForMs?: number;
  /** The longest wait for the job to end and its delivery to come (and, after `retriesForMs`, the next attempt). Default 300 s. */
  timeoutMs?: number;
  /** Stops the probe; the webhook is deleted before it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Told each step as it happens, in words. */
  progress?: (line: string) => void;
}

/**
 * The probe failed; `webhookDeleted` says whether its webhooks are gone (`null`: none was made),
 * and `webhooksLeft` which the gateway would not delete (its own, the one with a plain secret).
 */
export class ProbeError extends Error {
  override name = 'ProbeError';
  constructor(
    message: string,
    readonly webhookId: number | null,
    readonly webhookDeleted: boolean | null,
    options?: { cause?: unknown },
    readonly webhooksLeft: readonly number[] = webhookDeleted === false && webhookId !== null
      ? [webhookId]
      : [],
  ) {
    super(message, options);
  }
}

const DEFAULT_TIMEOUT_MS = 300_000;
// The plain webhook's delivery is sent beside the main one's: no need to wait long for it.
const PLAIN_WAIT_MS = 30_000;
const DEFAULT_PROMPT = 'a lighthouse on a cliff at dawn (jobhook probe)';

export async function runProbe(options: ProbeOptions): Promise<ProbeReport> {
  const { client, signal } = options;
  const say = options.progress ?? (() => undefined);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retriesForMs = options.retriesForMs ?? 0;
  // The Standard Webhooks form: a `whsec_` secret tells the two secret forms apart (its text and
  // its base64 give different keys).
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  // A second webhook, with a plain base64 secret: whether the gateway decodes one without the prefix too.
  const plainSecret = randomBytes(33).toString('base64');
  const tasks: ProbeTasks = { submitting: false, ids: [] };
  /** Retries are measured on the main task's deliveries: 500 within the window from its first attempt. */
  const answer = (delivery: Omit<CapturedDelivery, 'status'>): number => {
    if (retriesForMs === 0 || viaPlain(delivery)) return 200;
    // Before the task id is known, any delivery may be the job's: it is kept failing.
    if (tasks.main === undefined) return 500;
    if (!mainCarries(delivery, tasks.main)) return 200;
    const first = listener.deliveries.find((seen) => mainCarries(seen, tasks.main!)) ?? delivery;
    return delivery.monotonic - first.monotonic < retriesForMs ? 500 : 200;
  };
  const listener: ProbeListener = await startListener({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    answer,
    // Only what arrives once a job is submitted, and then only what names one of its tasks.
    keep: (delivery) => tasks.submitting || tasks.ids.some((id) => carries(delivery, id)),
  });
  const webhookUrl = options.publicUrl ?? listener.url;
  const plainUrl = plainUrlOf(webhookUrl);
  try {
    say(`Listening at ${listener.url}; registering a webhook for ${webhookUrl}`);
    const webhook = await client.webhooks
      .create({ url: webhookUrl, events: [...GATEWAY_EVENT_TYPES], secret_key: secret }, { signal })
      .catch(async (error: unknown) => {
        // Interrupted or failed, the gateway may have made it all the same: found by its URL.
        throw await leftBehind(
          client,
          webhookUrl,
          `could not register the webhook: ${clauseOf(error)}`,
          error,
        );
      });
    const webhookId = webhook.id;
    let report: ProbeReport | undefined;
    let failure: unknown;
    let plain: PlainWebhook | undefined;
    try {
      plain = await registerPlain(client, plainUrl, plainSecret, signal);
      report = await probeWith({
        ...options,
        secret,
        plain,
        timeoutMs,
        retriesForMs,
        listener,
        tasks,
        webhookUrl,
        webhookId,
      });
    } catch (error) {
      failure = error;
    }
    // Each is deleted, whether or not the other could be: each one left is named.
    const left = await deleteWebhooks(client, [webhookId, plain?.id]);
    if (failure !== undefined)
      throw new ProbeError(clauseOf(failure), webhookId, left.length === 0, { cause: failure }, left);
    report!.probe.webhookDeleted = left.length === 0;
    report!.probe.webhooksLeft = left;
    return report!;
  } finally {
    await listener.close();
  }
}

/** A registration's failure, any webhook made for `url` deleted: names the one found, or how to find it. */
async function leftBehind(
  client: GatewayClient,
  url: string,
  message: string,
  cause: unknown,
): Promise<ProbeError> {
  let found: number[];
  try {
    const webhooks = await client.webhooks.list({ timeoutMs: 15_000 });
    found = webhooks.filter((webhook) => webhook.url === url).map((webhook) => webhook.id);
  } catch {
    const hint = `; a webhook for ${url} may be left: find it with \`jobhook webhooks list\` and delete it with \`jobhook webhooks delete <id>\``;
    return new ProbeError(`${message}${hint}`, null, null, { cause });
  }
  if (found.length === 0) return new ProbeError(message, null, null, { cause });
  const left = await deleteWebhooks(client, found);
  return new ProbeError(message, found[0]!, left.length === 0, { cause }, left);
}

/** The webhook with a plain secret: its id, or why there is none (the probe goes on without it). */
interface PlainWebhook {
  id: number | null;
  secret: string;
  note?: string;
}

async function registerPlain(
  client: GatewayClient,
  url: string,
  secret: string,
  signal: AbortSignal | undefined,
): Promise<PlainWebhook> {
  try {
    const events = [...GATEWAY_EVENT_TYPES];
    return { id: (await client.webhooks.create({ url, events, secret_key: secret }, { signal })).id, secret };
  } catch (error) {
    const left = await leftBehind(client, url, clauseOf(error), error);
    if (signal?.aborted || left.webhookDeleted === false || left.message !== clauseOf(error)) throw left;
    const note = `The gateway took no webhook with a plain secret (${left.message}): how it keys a secret without "whsec_" is not known.`;
    return { id: null, secret, note };
  }
}

/** The plain secret's webhook's URL: the probe's, told apart by a query parameter. */
function plainUrlOf(webhookUrl: string): string {
  const url = new URL(webhookUrl);
  url.searchParams.set(PLAIN_PARAMETER, 'plain');
  return url.href;
}

const PLAIN_PARAMETER = 'jobhook-secret';

/** Whether a delivery came to the plain secret's webhook. */
function viaPlain(delivery: Pick<CapturedDelivery, 'url'>): boolean {
  return new URL(delivery.url, 'http://probe').searchParams.get(PLAIN_PARAMETER) === 'plain';
}

/** Whether a delivery came to the probe's main webhook and names the task. */
function mainCarries(delivery: Pick<CapturedDelivery, 'body' | 'headers' | 'url'>, taskId: string): boolean {
  return !viaPlain(delivery) && carries(delivery, taskId);
}

/** The `whsec_` signature, its secret form settled by the plain secret's delivery (both decoded: base64). */
function withPlainForm(
  signature: SignatureFinding,
  plain: SignatureFinding | undefined,
  notes: string[],
): SignatureFinding {
  if (signature.secretForm === null) return signature;
  const unknownNote = 'how the gateway keys a secret without "whsec_" is not known';
  if (plain === undefined) return signature;
  if (plain.scheme !== signature.scheme || plain.secretForm === null) {
    notes.push(
      `The delivery to the webhook with a plain secret did not verify as the other did: ${unknownNote}.`,
    );
    return signature;
  }
  if (plain.secretForm !== 'base64') return signature;
  if (signature.secretForm === 'whsec-base64') return { ...signature, secretForm: 'base64' };
  notes.push(
    'The gateway reads a "whsec_" secret as text but base64-decodes a plain one: give the receiver a plain base64 secret with secretForm "base64", or a "whsec_" one as it is.',
  );
  return signature;
}

/** Deletes each of `ids` (those not `null`/`undefined`): the ones the gateway did not delete. */
async function deleteWebhooks(
  client: GatewayClient,
  ids: readonly (number | null | undefined)[],
): Promise<number[]> {
  const left: number[] = [];
  for (const id of ids) if (id != null && !(await deleteWebhook(client, id))) left.push(id);
  return left;
}

/** Deletes the probe's webhook, on its own time (the probe's signal may be aborted): whether it is gone. */
async function deleteWebhook(client: GatewayClient, id: number): Promise<boolean> {
  try {
    await client.webhooks.delete(id, { timeoutMs: 15_000 });
    return true;
  } catch (error) {
    // Gone already is gone.
    return (error as { status?: unknown }).status === 404;
  }
}

interface ProbeTasks {
  main?: string;
  submitting: boolean;
  ids: string[];
}

interface ProbeRun extends ProbeOptions {
  secret: string;
  plain: PlainWebhook;
  timeoutMs: number;
  retriesForMs: number;
  listener: ProbeListener;
  tasks: ProbeTasks;
  webhookUrl: string;
  webhookId: number;
}

/** One probe, webhooks registered: the jobs, their deliveries, what they show, the contract checked. */
async function probeWith(run: ProbeRun): Promise<ProbeReport> {
  const say = run.progress ?? (() => undefined);
  const at = new Date().toISOString();
  const jobs = await submitJobs(run, say);
  const { taskId, failedTaskId } = jobs;
  // Notes are kept in the order the probe learns them: the report lists them so.
  const notes: string[] = [];
  if (run.plain.note !== undefined) notes.push(run.plain.note);
  const { task, first, failedDelivery, attempts, plainFirst } = await watchDeliveries(run, jobs, notes, say);
  const signature = withPlainForm(
    await detectSignature(first, run.secret),
    plainFirst && (await detectSignature(plainFirst, run.plain.secret)),
    notes,
  );
  const payload = payloadOf(
    { delivery: first, taskId, task },
    failedDelivery && { delivery: failedDelivery, taskId: failedTaskId! },
  );
  const retries = retriesOf(attempts, run.retriesForMs, signature, payload, notes);
  notesOf(signature.scheme, payload, notes, signature.headers?.id ?? undefined);
  const contract = contractOf(signature, payload, notes) ?? null;
  const last = attempts[attempts.length - 1]!;
  const check =
    contract &&
    (await checkContract(contract, run.secret, run.client, {
      completed: { delivery: last, taskId, imageUrl: task.image_url },
      failed: failedDelivery && { delivery: failedDelivery, taskId: failedTaskId! },
    }));
  return {
    probe: {
      at,
      baseUrl: run.baseUrl ?? null,
      webhookUrl: run.webhookUrl,
      webhookId: run.webhookId,
      webhookDeleted: false,
      webhooksLeft: [],
      taskId,
      failedTaskId: failedTaskId ?? null,
    },
    signature,
    payload,
    retries,
    check,
    contract,
    typescript: contract && typescriptOf(contract, run.baseUrl ?? null, at),
    notes,
  };
}

interface SubmittedJobs {
  taskId: string;
  failedTaskId: string | undefined;
}

/** Submits the job, and the one meant to fail when asked: their task ids. */
async function submitJobs(run: ProbeRun, say: (line: string) => void): Promise<SubmittedJobs> {
  const { client, signal, listener } = run;
  const job = {
    model: run.job?.model ?? 'default',
    aspect_ratio: run.job?.aspectRatio ?? '1:1',
  };
  // During a submission any delivery may be its task's; then only those naming a probe's task are kept.
  const submit = async (prompt: string): Promise<string> => {
    run.tasks.submitting = true;
    try {
      const taskId = plausibleTaskId((await client.images.generate({ ...job, prompt }, { signal })).task_id);
      run.tasks.ids.push(taskId);
      return taskId;
    } finally {
      run.tasks.submitting = false;
      listener.prune((delivery) => run.tasks.ids.some((id) => carries(delivery, id)));
    }
  };
  const taskId = await submit(run.job?.prompt ?? DEFAULT_PROMPT);
  run.tasks.main = taskId;
  say(`Submitted ${taskId}; waiting for it to end and for its delivery`);
  const failedTaskId = run.failPrompt === undefined ? undefined : await submit(run.failPrompt);
  if (failedTaskId !== undefined) say(`Submitted ${failedTaskId}, meant to fail`);
  return { taskId, failedTaskId };
}

/** What the gateway did with the jobs: the task as it ended, and the deliveries the probe reads. */
interface WatchedDeliveries {
  task: ImageTask;
  first: CapturedDelivery;
  failedDelivery: CapturedDelivery | undefined;
  attempts: CapturedDelivery[];
  plainFirst: CapturedDelivery | undefined;
}

/** Waits for the jobs and deliveries; one that never comes is noted, but the completed job's first. */
async function watchDeliveries(
  run: ProbeRun,
  { taskId, failedTaskId }: SubmittedJobs,
  notes: string[],
  say: (line: string) => void,
): Promise<WatchedDeliveries> {
  const { task, first } = await completionOf(run, taskId);
  const failedDelivery =
    failedTaskId === undefined ? undefined : await failedDeliveryOf(run, failedTaskId, notes);
  if (run.retriesForMs > 0) await retriesAfterWindow(run, taskId, first, notes, say);
  // The attempts counted are those in by now, before the wait for the plain webhook's delivery.
  const attempts = run.listener.deliveries.filter(toMainWebhookFor(taskId));
  const plainFirst = run.plain.id === null ? undefined : await plainDeliveryOf(run, taskId, notes);
  return { task, first, failedDelivery, attempts, plainFirst };
}

/** Matches the deliveries to the probe's main webhook that name the task. */
function toMainWebhookFor(taskId: string): (delivery: CapturedDelivery) => boolean {
  return (delivery) => mainCarries(delivery, taskId);
}

/** The task once it has completed, and its first delivery; a job that did not complete ends the probe. */
async function completionOf(
  run: ProbeRun,
  taskId: string,
): Promise<{ task: ImageTask; first: CapturedDelivery }> {
  const { client, signal, listener, timeoutMs } = run;
  const [task, first] = await Promise.all([
    endOf(client, taskId, timeoutMs, signal),
    listener.next(toMainWebhookFor(taskId), { timeoutMs, signal, what: `delivery for ${taskId}` }),
  ]);
  if (task.status !== 'completed') {
    throw new Error(
      `the job ${taskId} ended ${String(task.status)}: the probe needs a completed job (to find the image URL); try another --prompt or --model`,
    );
  }
  return { task, first };
}

/** The delivery of the job meant to fail; without one (but not when stopped) the probe goes on, noted. */
async function failedDeliveryOf(
  run: ProbeRun,
  failedTaskId: string,
  notes: string[],
): Promise<CapturedDelivery | undefined> {
  const { signal, listener, timeoutMs } = run;
  return await listener
    .next(toMainWebhookFor(failedTaskId), { timeoutMs, signal, what: `delivery for ${failedTaskId}` })
    .catch((error: unknown) => {
      if (signal?.aborted) throw error;
      notes.push(`No delivery came for ${failedTaskId} (the job meant to fail): ${clauseOf(error)}.`);
      return undefined;
    });
}

/** The task's first attempt answered 200 after the window of 500s: the retries between are measured. */
async function retriesAfterWindow(
  run: ProbeRun,
  taskId: string,
  first: CapturedDelivery,
  notes: string[],
  say: (line: string) => void,
): Promise<void> {
  const { signal, listener, timeoutMs, retriesForMs } = run;
  say(`Answering ${taskId}'s deliveries 500 for ${retriesForMs / 1000} s, then 200`);
  await listener
    .next((delivery) => mainCarries(delivery, taskId) && delivery.status < 300, {
      timeoutMs: Math.max(0, first.monotonic + retriesForMs - performance.now()) + timeoutMs,
      signal,
      what: `attempt for ${taskId} after the window`,
    })
    .catch((error: unknown) => {
      if (signal?.aborted) throw error;
      notes.push(
        `No attempt came after the ${retriesForMs / 1000} s window: ${clauseOf(error)}; the sender may have given up.`,
      );
    });
}

/** The delivery to the webhook with a plain secret; without one, how it keys such secrets is unknown. */
async function plainDeliveryOf(
  run: ProbeRun,
  taskId: string,
  notes: string[],
): Promise<CapturedDelivery | undefined> {
  const { signal, listener, timeoutMs } = run;
  return await listener
    .next((delivery) => viaPlain(delivery) && carries(delivery, taskId), {
      timeoutMs: Math.min(timeoutMs, PLAIN_WAIT_MS),
      signal,
      what: `delivery for ${taskId} to the webhook with a plain secret`,
    })
    .catch((error: unknown) => {
      if (signal?.aborted) throw error;
      notes.push(
        `No delivery came to the webhook with a plain secret (${clauseOf(error)}): how the gateway keys a secret without "whsec_" is not known.`,
      );
      return undefined;
    });
}

/** The payload's paths, from the completed (and failed) delivery; one that is not one JSON event ends it. */
function payloadOf(
  completed: { delivery: CapturedDelivery; taskId: string; task: ImageTask },
  failed: { delivery: CapturedDelivery; taskId: string } | undefined,
): PayloadFinding {
  const { delivery: first, taskId, task } = completed;
  const completedPayload = jsonOf(first);
  if (completedPayload === undefined) throw new Error(`the delivery for ${taskId} is not JSON`);
  if (Array.isArray(completedPayload)) {
    throw new Error(
      `the gateway batches its deliveries (a JSON array of ${completedPayload.length} in one POST), and a receiver takes one event per delivery: no contract can be adopted; ask the gateway for one event per delivery`,
    );
  }
  const failedPayload = failed && jsonOf(failed.delivery);
  return detectPayload({
    completed: { payload: completedPayload, headers: first.headers },
    failed:
      failed && failedPayload !== undefined
        ? { payload: failedPayload, headers: failed.delivery.headers, taskId: failed.taskId }
        : undefined,
    taskId,
    imageUrl: typeof task.image_url === 'string' ? task.image_url : undefined,
  });
}

/** How the gateway retried; an event id that changed between attempts is dropped from `payload`, noted. */
function retriesOf(
  attempts: readonly CapturedDelivery[],
  retriesForMs: number,
  signature: SignatureFinding,
  payload: PayloadFinding,
  notes: string[],
): RetryFinding {
  const readEventId = payload.eventIdPath === null ? undefined : pathReader(payload.eventIdPath);
  const retries = retryFinding(attempts, {
    measured: retriesForMs > 0,
    failedForMs: retriesForMs,
    idHeader: signature.headers?.id ?? null,
    eventIdOf: (delivery) => {
      const decoded = jsonOf(delivery);
      return readEventId && isRecord(decoded)
        ? readEventId(decoded, readHeaders(delivery.headers))
        : undefined;
    },
  });
  if (retries.sameEventId === false) {
    notes.push(`The payload's "${payload.eventIdPath}" changed between attempts: not used as the event id.`);
    payload.eventIdPath = null;
  }
  return retries;
}

function notesOf(scheme: string, payload: PayloadFinding, notes: string[], signedId?: string): void {
  const paths = [
    'typePath',
    'taskIdPath',
    'imageUrlPath',
    'errorPath',
    'eventIdPath',
    'createdAtPath',
  ] as const;
  for (const name of paths) {
    const path = payload[name];
    const header = path?.startsWith('header:') ? path.slice('header:'.length) : undefined;
    if (header === undefined || header === signedId) continue;
    notes.push(
      `${name} is read from the header ${header}, which the signature does not cover: anyone who captured a delivery can re-send its bytes with another value. jobhook runs one outcome per task (the first handled), but check that value yourself if it decides more.`,
    );
  }
  if (scheme === 'unsigned') {
    notes.push(
      'No signature: nothing proves a delivery came from the gateway. Ask whether it signs with secret_key.',
    );
  }
  if (scheme === 'unknown') {
    notes.push(
      'The signature is in a layout no preset reads: write a verifier (docs/events-and-signatures.md).',
    );
  }
  if (payload.assumed.includes('typeValues.failed') || payload.assumed.includes('errorPath')) {
    notes.push(
      "The failed job's type value and error were guessed from the completed one: pass --fail-prompt to see a failure.",
    );
  }
  if (payload.eventIdPath === null) {
    notes.push(
      'The payload carries no event id: the receiver uses "<type>:<task id>", stable across retries.',
    );
  }
}

/** The task once it has ended (completed or failed), within `timeoutMs`: the client's wait, polling. */
async function endOf(
  client: GatewayClient,
  taskId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ImageTask> {
  const polls = { pollIntervalMs: 250, maxPollIntervalMs: 2000 };
  try {
    return await client.images.waitFor(taskId, { timeoutMs, ...(signal && { signal }), ...polls });
  } catch (error) {
    if (error instanceof JobFailedError) return { ...error.task, task_id: taskId, status: 'failed' };
    if (error instanceof WaitTimeoutError) {
      throw new Error(`the job ${taskId} did not end within ${Math.round(timeoutMs / 1000)} s`, {
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * Runs captured deliveries through a receiver made with the contract: the completed one must
 * reach `onJobCompleted` as the typed event of its task, the failed one `onJobFailed`, and a copy
 * with one byte more must be refused 401 (when the scheme verifies anything).
 */
async function checkContract(
  contract: NonNullable<ProbeReport['contract']>,
  secret: string,
  client: GatewayClient,
  deliveries: {
    completed: { delivery: CapturedDelivery; taskId: string; imageUrl: unknown };
    failed: { delivery: CapturedDelivery; taskId: string } | undefined;
  },
): Promise<ContractCheck> {
  const unverified = contract.signature.scheme === 'unsigned' || contract.signature.scheme === 'unknown';
  const seen: (JobCompletedEvent | JobFailedEvent)[] = [];
  const receiver = createReceiver({
    secret,
    contract,
    dedupe: false,
    results: false,
    logger: { error: () => undefined, warn: () => undefined },
    // Nothing signs what jobhook can check: the deliveries are confirmed with the gateway, as adopted.
    ...(unverified && { confirm: { client } }),
  });
  receiver.onJobCompleted((event) => void seen.push(event));
  receiver.onJobFailed((event) => void seen.push(event));
  const run = async (delivery: CapturedDelivery, body: Uint8Array = delivery.body) =>
    (await receiver.receive({ method: 'POST', headers: delivery.headers, body })).status;
  const outcome = async (
    delivery: CapturedDelivery,
    expected: (event: JobCompletedEvent | JobFailedEvent) => boolean,
  ): Promise<string> => {
    seen.length = 0;
    const status = await run(delivery);
    if (status !== 200) return `answered ${status}`;
    const event = seen[0];
    if (!event) return 'answered 200 but reached no job handler';
    return expected(event) ? 'handled' : `reached ${event.type} without the values the probe knows`;
  };
  const { completed, failed } = deliveries;
  const result: ContractCheck = {
    completed: await outcome(
      completed.delivery,
      (event) =>
        event.type === 'job.completed' &&
        event.data.task_id === completed.taskId &&
        event.data.image_url === completed.imageUrl,
    ),
    failed: failed
      ? await outcome(
          failed.delivery,
          (event) => event.type === 'job.failed' && event.data.task_id === failed.taskId,
        )
      : null,
    forgedRefused: null,
  };
  if (!unverified) {
    const forged = new Uint8Array(completed.delivery.body.byteLength + 1);
    forged.set(completed.delivery.body);
    forged[forged.length - 1] = 0x20;
    result.forgedRefused = (await run(completed.delivery, forged)) === 401;
  }
  await receiver.close();
  return result;
}

/** Words a payload carries for other reasons: a task id equal to one would match any delivery. */
const NOT_TASK_IDS = new Set([
  'null',
  'undefined',
  'true',
  'false',
  'completed',
  'failed',
  ...GATEWAY_EVENT_TYPES,
]);

/** The submitted job's task id, when it can identify its deliveries: a printable token of 4 to 200 characters. */
function plausibleTaskId(value: unknown): string {
  if (
    typeof value === 'string' &&
    /^[\x21-\x7e]{4,200}$/.test(value) &&
    !NOT_TASK_IDS.has(value.toLowerCase())
  )
    return value;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
  throw new Error(
    `the gateway answered the submission with the task id ${shown}, which cannot identify a delivery (a printable id of 4 to 200 characters was expected)`,
  );
}

/** Whether a delivery names the task as an exact value: a header's, or a string anywhere in its JSON body. */
function carries(delivery: Pick<CapturedDelivery, 'body' | 'headers'>, taskId: string): boolean {
  if (Object.values(delivery.headers).some((value) => value === taskId)) return true;
  const decoded = jsonOf(delivery);
  return decoded !== undefined && holds(decoded, taskId, 0);
}

function holds(value: unknown, wanted: string, depth: number): boolean {
  if (value === wanted) return true;
  if (typeof value !== 'object' || value === null || depth >= 8) return false;
  return Object.values(value).some((inner) => holds(inner, wanted, depth + 1));
}

function jsonOf(delivery: Pick<CapturedDelivery, 'body'>): unknown {
  try {
    return JSON.parse(Buffer.from(delivery.body).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** An error's message as a clause inside a sentence: without its full stop. */
function clauseOf(error: unknown): string {
  return messageOf(error).replace(/\.$/, '');
}
