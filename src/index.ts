/**
 * The receiver: {@link createReceiver}, its handler and option types, the event schemas and types,
 * the signature schemes, the in-memory dedupe store and job tracker, and {@link JobhookError}.
 * What you implement to plug in a store, tracker, verifier, hand-off, result channel, observer or
 * adapter of your own is in `jobhook/extend`.
 *
 * @module jobhook
 */
import { BodyReadError as MovedBodyReadError } from './wire/body.js';

export { createReceiver } from './receiver/create-receiver.js';
export type { Receiver, AnyEvent, ErrorHandler } from './receiver/types.js';
export type { ReceiverOptions } from './receiver/options.js';
export type { SecretLookup, TenantSecrets } from './receiver/tenants.js';
export type { DeliveryContext, EventHandler } from './receiver/run-handlers.js';
export type { ReceiverContract } from './contract/receiver-contract.js';
export type { Logger } from './common/logging.js';
export type { ReceiverObserver } from './receiver/observe.js';
export type { JobResult } from './results/job-result.js';
export { JobhookError, type JobhookErrorCode } from './common/errors.js';
export { memoryDedupeStore } from './dedupe/memory-store.js';
export type { ReconcileOptions } from './reconcile/options.js';
export { memoryJobTracker } from './tracker/memory-tracker.js';
export { standardWebhooks } from './signatures/standard-webhooks.js';
export { hmacSha256 } from './signatures/hmac-sha256.js';
export { stripeSignature } from './signatures/stripe-signature.js';
export {
  defaultSchemas,
  jobCompletedSchema,
  jobFailedSchema,
  type JobCompletedEvent,
  type JobFailedEvent,
  type DefaultEvents,
  type EventSchemas,
} from './events/schemas.js';
export { GATEWAY_EVENT_TYPES } from './events/event-types.js';

/**
 * Why a body reader gave up: `too_large` or `unreadable`.
 *
 * @deprecated Import `BodyReadError` from `jobhook/extend`; `jobhook` stops exporting it in the
 * next version.
 */
export const BodyReadError = MovedBodyReadError;
/** @deprecated Import `BodyReadError` from `jobhook/extend`. */
export type BodyReadError = MovedBodyReadError;
