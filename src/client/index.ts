/**
 * The gateway's API: {@link createClient}, {@link GatewayError}, and {@link registerWebhook}, which
 * creates or reuses the webhook on startup.
 *
 * @module jobhook/client
 */
export { createClient, type ClientOptions, type GatewayClient } from './client.js';
export {
  GatewayError,
  GatewayNetworkError,
  GatewayRedirectError,
  GatewayResponseTooLargeError,
  GatewayTimeoutError,
} from './errors.js';
export {
  registerWebhook,
  type RegisterWebhookOptions,
  type RegisterWebhookResult,
  type StartupRetryOptions,
} from './register.js';
export type { RequestOptions } from './request.js';
export type { RetryOptions } from './retry.js';
export type {
  ApiKey,
  Balances,
  CreateKeyInput,
  CreateWebhookInput,
  GenerateImageInput,
  GenerateImageResult,
  ImageTask,
  TaskStatus,
  Webhook,
  WebhookEventType,
} from './types.js';
