/**
 * The receiver: {@link createReceiver}, the signature schemes, the event schemas and types, the
 * error type and the dedupe store.
 *
 * @module jobhook
 */
export { createReceiver } from './receiver/create-receiver.js';
export type {
  Receiver,
  DeliveryInput,
  AnyEvent,
  ErrorHandler,
  EventMap,
  CloseOptions,
} from './receiver/types.js';
export type { ReceiverOptions, VerifiedDelivery, DedupeKeyFunction } from './receiver/options.js';
export type { SecretLookup, SecretLookupRequest, TenantSecrets } from './receiver/tenants.js';
export type {
  ReceiverRegisterOptions,
  RegistrarOptions,
  RegistrarResult,
  WebhookRegistrar,
} from './receiver/register.js';
export type { ReceiverResponse, AnswerCode } from './wire/answers.js';
export type { DeliveryContext, DeliverySource, EventHandler } from './receiver/run-handlers.js';
export type { HeadersInput } from './wire/headers.js';
export type { BodyInput } from './wire/body.js';
export { BodyReadError, type BodyReader, type BodyLimits } from './wire/body.js';
export type { Logger } from './common/logging.js';
export type {
  ReceiverObserver,
  ObservedDelivery,
  ObservedHandoff,
  DeliveryOutcome,
  DedupeOutcome,
} from './receiver/observe.js';
export type { JobResult } from './results/job-result.js';
export type { JobResults, JobResultsOptions } from './results/job-results.js';
export type { ResultChannel } from './results/job-result.js';
export { JobhookError, type JobhookErrorCode } from './common/errors.js';
export type { DedupeStore, ClaimResult } from './dedupe/dedupe-store.js';
export type {
  Handoff,
  HandoffJob,
  QueuedAttempt,
  QueuedJobRunner,
  WorkerHandle,
  WorkOptions,
} from './handoff/handoff.js';
export type { FailedEvent, FailedEvents } from './handoff/handoff.js';
export {
  memoryDedupeStore,
  type MemoryDedupeStore,
  type MemoryDedupeOptions,
} from './dedupe/memory-store.js';
export type { JobTracker, TrackedJob, ClaimDueRequest } from './tracker/job-tracker.js';
export type { ReconcileOptions, ReconcileClient } from './reconcile/options.js';
export type {
  ReconcileObserver,
  ReconcileResult,
  DeliveryFailures,
  ExpiredJob,
} from './reconcile/options.js';
export type { TrackerTimes } from './tracker/job-tracker.js';
export {
  memoryJobTracker,
  type MemoryJobTracker,
  type MemoryJobTrackerOptions,
} from './tracker/memory-tracker.js';
export { standardWebhooks, type StandardWebhooksOptions } from './signatures/standard-webhooks.js';
export { hmacSha256, type HmacSha256Options } from './signatures/hmac-sha256.js';
export { stripeSignature, type StripeSignatureOptions } from './signatures/stripe-signature.js';
export type { SecretForm } from './signatures/secret.js';
export type {
  Verifier,
  VerifyFunction,
  CustomVerifyFunction,
  VerifyOutcome,
  VerifyRefusal,
  RefusalCode,
  HeaderCheckRequest,
  SignedRequest,
  SignInput,
} from './signatures/verifier.js';
export {
  defaultSchemas,
  jobCompletedSchema,
  jobFailedSchema,
  type JobCompletedEvent,
  type JobFailedEvent,
  type DefaultEvents,
  type EventSchemas,
  type UnknownEvent,
  type UnknownEventType,
} from './events/schemas.js';
export type { StandardSchemaV1 } from './events/schemas.js';
export { GATEWAY_EVENT_TYPES, type GatewayEventType } from './events/event-types.js';
