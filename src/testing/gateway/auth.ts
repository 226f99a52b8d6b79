import type { IncomingMessage } from 'node:http';
import { GatewayFailure } from './envelope.js';
import type { Account, ApiKeyRecord, GatewayState } from './state.js';

/** docs/gateway.md §5: a bearer key of a known account (401); `authorize` then checks its approval. */
export function authenticate(
  state: GatewayState,
  req: IncomingMessage,
): { key: ApiKeyRecord; account: Account } {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match)
    throw new GatewayFailure(401, 'unauthorized', 'An API key is required: Authorization: Bearer <API_KEY>.');
  const key = state.keys.get(match[1]!);
  const account = key && state.accounts.get(key.account_id);
  if (!key || !account) throw new GatewayFailure(401, 'unauthorized', 'The API key is invalid.');
  return { key, account };
}

/** docs/gateway.md §5: a known key's account must have its API access approved (403). */
export function authorize(account: Account): void {
  if (!account.approved) {
    throw new GatewayFailure(403, 'forbidden', 'API access is not approved for this account.');
  }
}

/** A fixed window per API key: simple, and exact enough to test a client's handling of 429. */
export function rateLimiter(
  limit: { requests: number; windowMs: number } | false,
  now: () => number = Date.now,
) {
  const windows = new Map<number, { start: number; count: number }>();
  return (keyId: number) => {
    if (limit === false) return;
    const at = now();
    let window = windows.get(keyId);
    if (!window || at - window.start >= limit.windowMs) {
      window = { start: at, count: 0 };
      windows.set(keyId, window);
    }
    window.count++;
    if (window.count > limit.requests) {
      const seconds = Math.max(1, Math.ceil((window.start + limit.windowMs - at) / 1000));
      throw new GatewayFailure(429, 'rate_limited', 'Rate limit exceeded; retry later.', {
        'retry-after': String(seconds),
      });
    }
  };
}
