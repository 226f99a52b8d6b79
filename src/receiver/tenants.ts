import { signHmac } from '#runtime';
import { toBase64Url, utf8Bytes } from '../common/bytes.js';
import { JobhookError } from '../common/errors.js';
import { TIMED_OUT, within } from '../common/deadline.js';
import type { Redactor } from '../common/redaction.js';
import type { HeaderReader } from '../wire/headers.js';
import type { VerifyFunction } from '../signatures/verifier.js';

/** What a `secret` function is given: the delivery's headers and the URL it was sent to. */
export interface SecretLookupRequest {
  /** Case-insensitive access to the request's headers (`headers.get('webhook-id')`). */
  headers: HeaderReader;
  /** The request's absolute URL, if known: pick by its path, not its host (a header the sender chose). */
  url: string | undefined;
}

/** A tenant and its secrets: the name (`context.tenant`) stays the same when the secrets rotate. */
export interface TenantSecrets {
  /** Your name for the tenant, such as its account id: a non-empty string. */
  tenant: string;
  /** Its secret, or several during a rotation. */
  secret: string | readonly string[];
}

/**
 * Picks one delivery's secrets: a secret, a list (a rotation), `{ tenant, secret }`, or nothing
 * (answered as a wrong signature). May be async; a throw or a lookup slower than `bodyTimeoutMs`
 * is a 500. Keys, results and tracked tasks are scoped to the tenant; an unnamed tenant is known by
 * its list of secrets, so name it to keep one tenant across a rotation.
 */
export type SecretLookup = (
  request: SecretLookupRequest,
) =>
  | string
  | readonly string[]
  | TenantSecrets
  | null
  | undefined
  | PromiseLike<string | readonly string[] | TenantSecrets | null | undefined>;

/** The verifier and the tenant of one delivery's secrets. */
export interface FoundSecrets {
  verify: VerifyFunction;
  tenant: string;
}

/** A receiver's `secret` function, with what it found prepared once per list of secrets. */
export interface TenantLookup {
  /** The secrets of one delivery, or `undefined` for none; rejects when the function failed or took too long. */
  find(request: SecretLookupRequest, timeoutMs: number): Promise<FoundSecrets | undefined>;
  /** The verifier's checks that need no secret: run before the lookup, the same for every tenant. */
  checkHeaders: VerifyFunction['checkHeaders'];
}

/**
 * Most secret lists whose prepared keys are kept (the least recently used goes first): as many as
 * the redaction learns, so that a refusal costs the same with one tenant or ten thousand.
 */
const PREPARED_LISTS = 10_000;
/** Most secrets the log redaction learns from a lookup: it bounds memory, whatever the tenants. */
const MAX_REDACTED = 10_000;

/**
 * The `secret` function of a receiver: its answers checked, their keys prepared once per list
 * (the cache is keyed by the list itself, so two different lists never share one), and every
 * secret it returns added to `redact`.
 */
export function tenantLookup(
  find: SecretLookup,
  prepare: (secrets: readonly string[]) => VerifyFunction,
  redact: Redactor,
): TenantLookup {
  const prepared = new Map<string, { verify: VerifyFunction; fingerprint: Promise<string> }>();
  let redacted = 0;

  function preparedFor(secrets: readonly string[]) {
    const key = JSON.stringify(secrets);
    let entry = prepared.get(key);
    if (entry !== undefined) {
      prepared.delete(key);
      prepared.set(key, entry);
    } else {
      entry = { verify: prepare(secrets), fingerprint: fingerprintOf(secrets) };
      if (prepared.size >= PREPARED_LISTS) prepared.delete(prepared.keys().next().value!);
      prepared.set(key, entry);
      if (redacted < MAX_REDACTED) {
        redacted += secrets.length;
        redact.add(secrets);
      }
    }
    return entry;
  }

  return {
    async find(request, timeoutMs) {
      const answer = await within(Promise.resolve(find(request)), timeoutMs, { unref: true });
      if (answer === TIMED_OUT) throw new Error(`no answer within ${timeoutMs} ms`);
      const given = tenantSecretsOf(answer);
      if (given === undefined) return undefined;
      const entry = preparedFor(given.secrets);
      return { verify: entry.verify, tenant: given.tenant ?? (await entry.fingerprint) };
    },
    // Header checks need no secret: any list gives the same ones.
    checkHeaders: prepare(['jobhook-header-checks']).checkHeaders,
  };
}

/** The secrets (and the tenant, if named) a lookup gave, checked; `undefined` for none. */
function tenantSecretsOf(given: unknown): { secrets: readonly string[]; tenant?: string } | undefined {
  if (given === undefined || given === null) return undefined;
  const named = typeof given === 'object' && !Array.isArray(given);
  const { tenant, secret } = named ? (given as Partial<TenantSecrets>) : { tenant: undefined, secret: given };
  if (named && !(typeof tenant === 'string' && tenant.length > 0)) throw badAnswer();
  const list: unknown[] = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? secret : [secret];
  if (!list.every((one) => typeof one === 'string' && one.length > 0)) throw badAnswer();
  if (list.length === 0) return undefined;
  return { secrets: list as string[], tenant };
}

function badAnswer(): JobhookError {
  return new JobhookError(
    'invalid_options',
    'The `secret` function returned something other than a secret, a list of secrets, { tenant, secret } or nothing.',
  );
}

/**
 * The name of a tenant known only by its secrets: a keyed hash of the list (in any order), so that
 * a dedupe key in a shared store never shows a secret.
 */
async function fingerprintOf(secrets: readonly string[]): Promise<string> {
  const digest = await signHmac(utf8Bytes('jobhook tenant'), [JSON.stringify([...secrets].sort())]);
  return `secrets:${toBase64Url(digest.subarray(0, 16))}`;
}
