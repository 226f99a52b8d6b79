/**
 * The gateway's API: {@link createClient}, {@link GatewayError}, and {@link registerWebhook}, which
 * creates or reuses the webhook on startup. `client.images.generateAndWait` submits a job and
 * resolves with its image, or rejects with a {@link JobFailedError} or {@link WaitTimeoutError}.
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
  JobFailedError,
  WaitTimeoutError,
} from './errors.js';
export type { CompletedImageTask, WaitOptions } from './wait-for.js';
export { registerWebhook, type RegisterWebhookOptions, type RegisterWebhookResult } from './register.js';
export type {
  ApiKey,
  Balances,
  GenerateImageInput,
  GenerateImageResult,
  ImageTask,
  TaskStatus,
  Webhook,
} from './types.js';
