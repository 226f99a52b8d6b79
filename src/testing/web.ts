/**
 * `jobhook/testing` on Cloudflare Workers, the Vercel Edge Runtime and in browsers: only
 * {@link signDelivery}, which there returns a promise (crypto.subtle signs asynchronously). The
 * gateway simulator needs a Node HTTP server: start it from Node (or `jobhook gateway`).
 *
 * @module jobhook/testing (Web)
 */
import { signAnywhere, type SignDeliveryOptions, type SignedTestDelivery } from './sign-delivery.js';

export type { SignDeliveryOptions, SignedTestDelivery };
export type { Signing } from './signing.js';

/** Signs a test delivery; `await` it, then send `headers` and `body` as they are. */
export async function signDelivery(options: SignDeliveryOptions): Promise<SignedTestDelivery> {
  return signAnywhere(options);
}
