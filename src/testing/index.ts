export { signDelivery, type SignDeliveryOptions } from './sign-delivery.js';
export type { SignedDelivery } from '../signatures/verifier.js';
