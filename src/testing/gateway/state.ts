/** The simulator's in-memory records. Field names follow the gateway document's snake_case. */

export interface Account {
  id: number;
  approved: boolean;
  total_credits: number;
  used_credits: number;
}

export interface ApiKeyRecord {
  id: number;
  account_id: number;
  title: string;
  status: 'created';
  created_at: string;
  api_key: string;
}

/** The simulator's record of a webhook, including its `secret_key`, for assertions. */
export interface WebhookRecord {
  id: number;
  account_id: number;
  url: string;
  events: string[];
  status: 'active';
  api_key_id: number | null;
  created_at: string;
  updated_at: string;
  /** Kept server-side only: never part of a response. */
  secret_key: string | undefined;
  total_sent: number;
  total_failed: number;
  last_sent_at: string | null;
  last_error: string | null;
}

export type TaskStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'unknown';

export interface TaskRecord {
  task_id: string;
  account_id: number;
  api_key_id: number;
  model: string;
  prompt: string;
  aspect_ratio: string;
  status: TaskStatus;
  created_at: string;
  updated_at: string;
  image_url?: string;
  error?: { code: string; message: string };
}

export interface GatewayState {
  accounts: Map<number, Account>;
  keys: Map<string, ApiKeyRecord>;
  webhooks: Map<number, WebhookRecord>;
  tasks: Map<string, TaskRecord>;
  nextId(kind: 'account' | 'key' | 'webhook'): number;
}

export function createState(): GatewayState {
  const counters = { account: 0, key: 0, webhook: 0 };
  return {
    accounts: new Map(),
    keys: new Map(),
    webhooks: new Map(),
    tasks: new Map(),
    nextId: (kind) => ++counters[kind],
  };
}

export const nowIso = () => new Date().toISOString();
