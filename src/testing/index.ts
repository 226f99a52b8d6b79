/**
 * For tests: {@link signDelivery} signs deliveries the way the gateway does, and
 * {@link startGateway} runs the whole gateway in memory.
 *
 * @module jobhook/testing
 */
export { signDelivery, type SignDeliveryOptions, type SignedTestDelivery } from './sign-delivery.js';
export type { SignedDelivery } from '../signatures/verifier.js';
export type { Signing, SigningFamily } from './signing.js';
export type { PayloadShape } from './gateway/payload-shapes.js';
export {
  startGateway,
  type Gateway,
  type GatewayOptions,
  type InjectedFailure,
  type JobOutcome,
  type JobRequest,
  type DeliveryAttempt,
  type DroppedDelivery,
  type RecordedRequest,
  type WebhookRecord,
} from './gateway/index.js';
export type { ListStyle } from './gateway/webhooks.js';
