import { hmacSha256 } from '../signatures/hmac-sha256.js';
import { standardWebhooks } from '../signatures/standard-webhooks.js';
import { stripeSignature } from '../signatures/stripe-signature.js';
import type { Verifier } from '../signatures/verifier.js';
import type { ReceiverContract } from './receiver-contract.js';

type SignedScheme = Exclude<ReceiverContract['signature'], { scheme: 'unsigned' | 'unknown' }>;

/**
 * The preset a contract's signature names, with its parameters: the presets check their own
 * options (header names, encodings), and name themselves in what they refuse.
 */
export function contractVerifier(signature: SignedScheme): Verifier {
  const secretForm = signature.secretForm === undefined ? {} : { secretForm: signature.secretForm };
  switch (signature.scheme) {
    case 'standard-webhooks':
      return standardWebhooks(secretForm);
    case 'hmac-sha256':
      return hmacSha256({
        header: signature.header,
        ...(signature.prefix !== undefined && { prefix: signature.prefix }),
        ...(signature.encoding !== undefined && { encoding: signature.encoding }),
        ...secretForm,
      });
    case 'stripe':
      return stripeSignature({
        ...(signature.header !== undefined && { header: signature.header }),
        ...secretForm,
      });
  }
}
