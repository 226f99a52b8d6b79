/**
 * For tests: {@link signDelivery} signs deliveries the way the gateway does, and
 * {@link startGateway} runs the whole gateway in memory.
 *
 * @module jobhook/testing
 */
export { signDelivery, type SignDeliveryOptions, type SignedTestDelivery } from './sign-delivery.js';
export type { Signing } from './signing.js';
export {
  startGateway,
  type ForeignScheme,
  type Gateway,
  type GatewayOptions,
} from '../tools/simulator/index.js';
