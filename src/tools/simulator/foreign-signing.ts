// Schemes the simulator signs in that jobhook has no verifier for, as a gateway may: what the probe
// reports `unknown`, for rehearsing a receiver in confirm mode (docs/contracts.md).
import { createHmac } from 'node:crypto';
import type { Verifier } from 'jobhook/extend';

/** A scheme jobhook cannot verify: HMAC-SHA512 of the body, or Slack's `v0:` layout. */
export type ForeignScheme = 'hmac-sha512' | 'slack-v0';

export const FOREIGN_SCHEMES: readonly ForeignScheme[] = ['hmac-sha512', 'slack-v0'];

/** Whether `value` names a foreign scheme, by name or as `{ scheme }`. */
export function foreignSchemeOf(value: unknown): ForeignScheme | undefined {
  const name = typeof value === 'object' && value !== null ? (value as { scheme?: unknown }).scheme : value;
  return FOREIGN_SCHEMES.includes(name as never) ? (name as ForeignScheme) : undefined;
}

/** A signer of `scheme`; its secret is the `secret_key`'s UTF-8 bytes, as Slack's signing secret is. */
export function foreignSigner(scheme: ForeignScheme): Verifier {
  return {
    name: scheme,
    // The simulator only signs; a receiver cannot check these with jobhook, which is the point.
    prepare: () => () => ({ ok: false, code: 'no_match', detail: `jobhook has no verifier for ${scheme}` }),
    sign({ secret, body, timestamp }): Record<string, string> {
      const hmac = (algorithm: string) => createHmac(algorithm, Buffer.from(secret, 'utf8'));
      if (scheme === 'hmac-sha512') {
        return { 'x-hub-signature-512': `sha512=${hmac('sha512').update(body).digest('hex')}` };
      }
      const ts = String(timestamp ?? Math.floor(Date.now() / 1000));
      return {
        'x-slack-request-timestamp': ts,
        'x-slack-signature': `v0=${hmac('sha256').update(`v0:${ts}:`).update(body).digest('hex')}`,
      };
    },
  };
}
