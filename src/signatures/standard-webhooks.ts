import { hmacSha256Digest, bytesEqual } from './hmac.js';
import { preset } from './presets.js';
import { hmacKey } from './secret.js';
import type { SignInput, Verifier, VerifyOutcome } from './verifier.js';

const MAX_ID_LENGTH = 256;
const TIMESTAMP = /^\d{1,12}$/;

/**
 * The Standard Webhooks v1 scheme (the one Svix and many senders use), jobhook's default:
 * headers `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`; the signed
 * content is `${id}.${timestamp}.${body}`, HMAC-SHA256, written `v1,<base64>`. The signature
 * header may hold several space-separated signatures (key rotation); any one valid one passes.
 */
export function standardWebhooks(): Verifier {
  return preset({
    name: 'standard-webhooks',
    prepare(secrets) {
      const keys = secrets.map(hmacKey);
      return ({ headers, body, now, toleranceSeconds }): VerifyOutcome => {
        const id = headers.get('webhook-id');
        const timestamp = headers.get('webhook-timestamp');
        const signature = headers.get('webhook-signature');
        if (!id || !timestamp || !signature) {
          const missing = [
            !id && 'webhook-id',
            !timestamp && 'webhook-timestamp',
            !signature && 'webhook-signature',
          ];
          return { ok: false, reason: `Missing header: ${missing.filter(Boolean).join(', ')}.` };
        }
        if (id.length > MAX_ID_LENGTH) return { ok: false, reason: 'The webhook-id header is too long.' };
        if (!TIMESTAMP.test(timestamp)) {
          return { ok: false, reason: 'The webhook-timestamp header is not Unix seconds.' };
        }
        if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) {
          return { ok: false, reason: 'The webhook-timestamp is outside the allowed tolerance.' };
        }
        const candidates = v1Signatures(signature);
        if (candidates.length === 0) {
          return { ok: false, reason: 'The webhook-signature header holds no v1 signature.' };
        }
        for (const key of keys) {
          const expected = hmacSha256Digest(key, [id, '.', timestamp, '.', body]);
          if (candidates.some((candidate) => bytesEqual(candidate, expected))) return { ok: true, id };
        }
        return { ok: false, reason: 'No signature matches.' };
      };
    },
    sign({ secret, body, id, timestamp }: SignInput) {
      const digest = hmacSha256Digest(hmacKey(secret), [id, '.', String(timestamp), '.', body]);
      return {
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': `v1,${digest.toString('base64')}`,
      };
    },
  });
}

/** `v1,<b64> v1,<b64> v1a,<other>` to the decoded v1 signatures. Tolerates the `, ` that joins repeated headers. */
function v1Signatures(header: string): Buffer[] {
  const signatures: Buffer[] = [];
  for (const entry of header.split(/\s+/)) {
    if (!entry.startsWith('v1,')) continue;
    const encoded = entry.slice(3).replace(/,$/, '');
    if (encoded.length > 0) signatures.push(Buffer.from(encoded, 'base64'));
  }
  return signatures;
}
