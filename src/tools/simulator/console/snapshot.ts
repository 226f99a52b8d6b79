import type { DeliveryAttempt, DeliveryLog, DeliveryRecord } from '../deliveries.js';
import type { ApiKeyRecord, GatewayState, TaskRecord, WebhookRecord } from '../state.js';

/** The console shows the newest this many jobs and deliveries: a long session stays light. */
export const CONSOLE_LIMIT = 100;

/** What `/_console/state` answers and each server-sent `state` event carries. */
export interface ConsoleSnapshot {
  baseUrl: string;
  /** The one account the console shows, and the key it acts with (never the key itself). */
  account: { id: number; approved: boolean; remaining_credits: number; key_id: number; key_title: string };
  /** The account's API keys, oldest first: never the plaintext key (only its creation answer has it). */
  keys: Pick<ApiKeyRecord, 'id' | 'title' | 'status' | 'created_at'>[];
  /** Never the `secret_key`. */
  webhooks: Pick<
    WebhookRecord,
    | 'id'
    | 'account_id'
    | 'url'
    | 'events'
    | 'api_key_id'
    | 'created_at'
    | 'total_sent'
    | 'total_failed'
    | 'last_sent_at'
    | 'last_error'
  >[];
  /** Newest first. */
  jobs: Pick<
    TaskRecord,
    | 'task_id'
    | 'account_id'
    | 'model'
    | 'prompt'
    | 'status'
    | 'created_at'
    | 'updated_at'
    | 'image_url'
    | 'error'
  >[];
  /** Newest first; each with its attempts, oldest first. */
  deliveries: (Pick<
    DeliveryRecord,
    | 'number'
    | 'deliveryId'
    | 'eventId'
    | 'type'
    | 'taskId'
    | 'webhookId'
    | 'startedAt'
    | 'redelivery'
    | 'state'
  > & {
    /** The webhook's URL, or null once the webhook is deleted. */
    url: string | null;
    nextAttemptAt: string | null;
    attempts: Pick<DeliveryAttempt, 'attempt' | 'at' | 'ok' | 'status' | 'error' | 'durationMs' | 'answer'>[];
  })[];
  /** How many jobs and deliveries exist in all, of which the newest CONSOLE_LIMIT are listed. */
  totals: { jobs: number; deliveries: number };
}

/** A copy of what the simulator holds for the account of `key` only; never a secret_key or an API key. */
export function consoleSnapshot(
  baseUrl: string,
  state: GatewayState,
  log: DeliveryLog,
  key: ApiKeyRecord,
): ConsoleSnapshot {
  const accountId = key.account_id;
  const owner = state.accounts.get(accountId)!;
  const account = {
    id: accountId,
    approved: owner.approved,
    remaining_credits: owner.total_credits - owner.used_credits,
    key_id: key.id,
    key_title: key.title,
  };
  const keys = [...state.keys.values()]
    .filter((record) => record.account_id === accountId)
    .map(({ id, title, status, created_at }) => ({ id, title, status, created_at }));
  const mine = <T extends { account_id: number }>(items: Iterable<T>) =>
    [...items].filter((item) => item.account_id === accountId);
  const webhooks = mine(state.webhooks.values()).map((webhook) => ({
    id: webhook.id,
    account_id: webhook.account_id,
    url: webhook.url,
    events: [...webhook.events],
    api_key_id: webhook.api_key_id,
    created_at: webhook.created_at,
    total_sent: webhook.total_sent,
    total_failed: webhook.total_failed,
    last_sent_at: webhook.last_sent_at,
    last_error: webhook.last_error,
  }));
  const tasks = mine(state.tasks.values());
  const jobs = newest(tasks).map((task) => ({
    task_id: task.task_id,
    account_id: task.account_id,
    model: task.model,
    prompt: task.prompt,
    status: task.status,
    created_at: task.created_at,
    updated_at: task.updated_at,
    ...(task.image_url !== undefined && { image_url: task.image_url }),
    ...(task.error !== undefined && { error: { ...task.error } }),
  }));
  const records = log.all().filter((record) => record.accountId === accountId);
  const deliveries = newest(records).map((record) => ({
    number: record.number,
    deliveryId: record.deliveryId,
    eventId: record.eventId,
    type: record.type,
    taskId: record.taskId,
    webhookId: record.webhookId,
    url: state.webhooks.get(record.webhookId)?.url ?? null,
    startedAt: record.startedAt,
    redelivery: record.redelivery,
    state: record.state,
    nextAttemptAt: record.nextAttemptAt ?? null,
    attempts: record.attempts.map(({ attempt, at, ok, status, error, durationMs, answer }) => ({
      attempt,
      at,
      ok,
      status,
      error,
      durationMs,
      answer,
    })),
  }));
  const totals = { jobs: tasks.length, deliveries: records.length };
  return { baseUrl, account, keys, webhooks, jobs, deliveries, totals };
}

function newest<T>(items: readonly T[]): T[] {
  return items.slice(-CONSOLE_LIMIT).reverse();
}
