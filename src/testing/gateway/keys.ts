import { randomBytes } from 'node:crypto';
import { invalid } from './envelope.js';
import { nowIso, type ApiKeyRecord, type GatewayState } from './state.js';
import type { RouteContext } from './routes.js';

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

/** A key of `accountId`: `apiKey` when given (a stable key of `startGateway({ apiKey })`), else a fresh one. */
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
