/**
 * The contracts behind the receiver, for code that plugs into it rather than uses it: a dedupe
 * store ({@link DedupeStore}), a job tracker ({@link JobTracker}), an inbox ({@link Inbox}), a signature scheme
 * ({@link Verifier}), a hand-off to a queue ({@link Handoff}) and its worker, a result channel
 * ({@link ResultChannel}), an observer's details ({@link ObservedDelivery}), and an adapter for a
 * server jobhook has none for ({@link DeliveryInput}, {@link BodyReader}). An app that only
 * receives needs nothing from here: `jobhook` has what it writes.
 *
 *   import type { DedupeStore } from 'jobhook/extend';
 *
 * @module jobhook/extend
 */

// An adapter: what it passes to `receiver.receive()`, how the body is read, what comes back.
export type { DeliveryFramework, DeliveryInput, EventMap } from './receiver/types.js';
export type { ReceiverResponse, AnswerCode } from './wire/answers.js';
export type { HeadersInput } from './wire/headers.js';
export type { BodyInput } from './wire/body.js';
export { BodyReadError, type BodyReader, type BodyLimits } from './wire/body.js';

// A dedupe store and a job tracker.
export type { DedupeStore, ClaimResult } from './dedupe/dedupe-store.js';
export type { JobTracker, TrackedJob, ClaimDueRequest } from './tracker/job-tracker.js';
export type { TrackerTimes } from './tracker/job-tracker.js';

// An inbox, and what a replay takes and gives.
export type {
  Inbox,
  InboxDelivery,
  InboxFilter,
  InboxRetry,
  InboxSettlement,
  InboxStatus,
  ReplayMark,
  StoredDelivery,
} from './inbox/inbox.js';
export type { InboxOptions } from './inbox/options.js';
export type { ReplayOptions, ReplayReport, ReplayedDelivery } from './receiver/replay.js';

// A signature scheme.
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

// A hand-off and its worker, and the failed events a queue keeps.
export type {
  Handoff,
  HandoffJob,
  QueuedAttempt,
  QueuedJobRunner,
  WorkerHandle,
  WorkOptions,
} from './handoff/handoff.js';
export type { FailedEvent, FailedEvents } from './handoff/handoff.js';

// Job results shared between instances.
export type { ResultChannel } from './results/job-result.js';
export type { JobResults } from './results/job-results.js';

// An observer's details (the observer itself, `ReceiverObserver`, is in `jobhook`).
export type {
  ObservedDelivery,
  ObservedHandoff,
  DeliveryOutcome,
  DedupeOutcome,
} from './receiver/observe.js';
export type { SignatureAlarm } from './receiver/refusal-log.js';
export type {
  ReconcileObserver,
  ReconcileResult,
  DeliveryFailures,
  ExpiredJob,
} from './reconcile/options.js';

// What the receiver calls on a gateway client: `jobhook/client`'s client has both.
export type { WebhookRegistrar } from './receiver/register.js';
export type { ReconcileClient } from './reconcile/options.js';
export type { ConfirmClient, ConfirmOptions } from './receiver/confirm.js';

// Events of a type with no schema, and the schema contract.
export type { UnknownEvent } from './events/schemas.js';
export type { StandardSchemaV1 } from './events/schemas.js';

// What jobhook's own tools (src/tools/) are built from, for a tool of yours built the same way.
export { readRequestBody, limitsWithin, readBodyCapped } from './wire/collect-stream.js';
export { readHeaders } from './wire/headers.js';
export { deadline } from './common/deadline.js';
export { sleep, type Backoff } from './common/backoff.js';
export { messageOf } from './common/logging.js';
export { redactor } from './common/redaction.js';
export { isRecord } from './common/values.js';
export * as optionChecks from './common/option-checks.js';
export {
  samplePayload,
  isGatewayEventType,
  type GatewayEventType,
  type SamplePayload,
} from './events/event-types.js';
export { HEADER_PATH, pathReader } from './contract/map-payload.js';
export { SECRET_FORMS, secretBytes, type SecretForm } from './signatures/secret.js';
export {
  schemeVerifier,
  schemeParametersOf,
  type SchemeName,
  type SchemeParameters,
} from './signatures/schemes.js';
export {
  SIGNING_SCHEMES,
  resolveSigning,
  signedHeaders,
  canSignWith,
  type DeliverySigning,
  type Signing,
} from './testing/signing.js';
