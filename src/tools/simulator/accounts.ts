// Accounts and their API keys: creation, POST /api/v1/keys, and who may call (docs/gateway.md §5).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GatewayFailure, invalid, type RouteContext } from './routes.js';
import { nowIso, type Account, type ApiKeyRecord, type GatewayState } from './state.js';

const MAX_TITLE_LENGTH = 200;

export function createAccount(state: GatewayState, options: { approved: boolean; credits: number }) {
  const account = {
    id: state.nextId('account'),
    approved: options.approved,
    total_credits: options.credits,
    used_credits: 0,
  };
  state.accounts.set(account.id, account);
  return account;
}

/** A key of `accountId`: `apiKey` when given (`startGateway({ apiKey })`), else a fresh one. */
export function createKey(
  state: GatewayState,
  accountId: number,
  title: string,
  apiKey = `sk_sim_${randomBytes(18).toString('hex')}`,
): ApiKeyRecord {
  const record: ApiKeyRecord = {
    id: state.nextId('key'),
    account_id: accountId,
    title,
    status: 'created',
    created_at: nowIso(),
    api_key: apiKey,
  };
  state.keys.set(record.api_key, record);
  return record;
}

/** POST /api/v1/keys: the plaintext key is in this answer and in no other. */
export function postKey({ state, account, body }: RouteContext) {
  const title = body.title;
  if (typeof title !== 'string' || title.trim().length === 0 || title.length > MAX_TITLE_LENGTH) {
    throw invalid(`title must be a non-empty string of at most ${MAX_TITLE_LENGTH} characters.`);
  }
  const { id, status, created_at, api_key } = createKey(state, account.id, title);
  return { id, title, status, created_at, api_key };
}

/** A bearer key of a known account, else 401. */
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

/** A known key's account must have its API access approved, else 403. */
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
