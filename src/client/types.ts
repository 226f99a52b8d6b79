// Resources as the gateway names them (snake_case), with any field it adds: never a stripped copy.
import type { GatewayEventType } from '../events/event-types.js';

/** Event types a webhook can subscribe to. */
export type WebhookEventType = GatewayEventType;

/** Normalised task statuses (docs/gateway.md §3). */
export type TaskStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'unknown';

/** docs/gateway.md §2.2; `api_key` is present only in the creation answer. */
export interface ApiKey {
  id: number;
  title: string;
  status: string;
  created_at: string;
  api_key?: string;
  [field: string]: unknown;
}

/** docs/gateway.md §2.3. The counters and last_error are present only in list answers. */
export interface Webhook {
  id: number;
  url: string;
  events: string[];
  status: string;
  api_key_id?: number | null;
  created_at: string;
  updated_at: string;
  total_sent?: number;
  total_failed?: number;
  last_sent_at?: string | null;
  last_error?: string | null;
  [field: string]: unknown;
}

/** The body of `POST /api/v1/keys` (docs/gateway.md §4.1). */
export interface CreateKeyInput {
  title: string;
}

/** The body of `POST /api/v1/webhooks` (docs/gateway.md §4.2). */
export interface CreateWebhookInput {
  url: string;
  events: readonly (WebhookEventType | (string & {}))[];
  /** Deliveries are signed with it. The gateway never returns it. */
  secret_key?: string;
  /** Restricts the webhook to the key that authenticates this request; must be that key's id. */
  api_key_id?: number;
}

/** The body of `POST /api/v1/images/generate` (docs/gateway.md §4.5); other fields are sent as given. */
export interface GenerateImageInput {
  model: string;
  prompt: string;
  /** `<width>:<height>`, for example `16:9`. */
  aspect_ratio?: string;
  [field: string]: unknown;
}

/** docs/gateway.md §4.5. */
export interface GenerateImageResult {
  task_id: string;
  credits_used: number;
  remaining_credits: number;
  [field: string]: unknown;
}

/** docs/gateway.md §4.6: image_url once completed. */
export interface ImageTask {
  task_id: string;
  status: TaskStatus | (string & {});
  image_url?: string;
  [field: string]: unknown;
}

/** docs/gateway.md §4.7 does not show the shape; this is the simulator's (docs/gateway-simulator.md). */
export interface Balances {
  total_credits?: number;
  used_credits?: number;
  remaining_credits?: number;
  [field: string]: unknown;
}
