/**
 * The families of signature the testing kit signs in, by name and parameters: one description
 * that `signDelivery({ scheme })` and the simulator's `signing` option both read, each family
 * signed by the verifier preset that checks it, so that a family has one implementation.
 */
import { checkOption, oneOf, refuseUnknownOptions } from '../common/errors.js';
import { andThen } from '../common/deadline.js';
import { hmacSha256 } from '../signatures/hmac-sha256.js';
import { SECRET_FORMS, secretBytes, type SecretForm } from '../signatures/secret.js';
import { standardWebhooks } from '../signatures/standard-webhooks.js';
import { stripeSignature } from '../signatures/stripe-signature.js';
import type { Verifier } from '../signatures/verifier.js';

/** A family of signature schemes, named as docs/events-and-signatures.md describes each. */
export type SigningFamily = 'standard-webhooks' | 'svix' | 'hmac-sha256' | 'stripe' | 'unsigned';

/**
 * How deliveries are signed: a family's name (with its defaults), a family with parameters, or a
 * {@link Verifier} that can sign.
 * - `standard-webhooks`: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` over
 *   `${id}.${timestamp}.${body}`; `svix`: the same under `svix-id`, `svix-timestamp`,
 *   `svix-signature`. Secret form `whsec-base64`.
 * - `hmac-sha256`: the body's HMAC in one header, GitHub's by default:
 *   `x-hub-signature-256: sha256=<hex>`; `header`, `prefix` (`''` for none), `encoding`. Secret
 *   form `whsec-base64` (a GitHub secret, not `whsec_`, is its text either way).
 * - `stripe`: `stripe-signature: t=<unix>,v1=<hex>` over `${t}.${body}`; `header`. Secret form
 *   `utf8`, Stripe's: the whole `whsec_…` string is the key.
 * - `unsigned`: no signature header at all.
 *
 * `secretForm` replaces a family's secret form; `idHeader` (for `hmac-sha256`, `stripe` and
 * `unsigned`, which sign no id) also sends the delivery id in that header.
 */
export type Signing =
  | SigningFamily
  | { family: 'standard-webhooks' | 'svix'; secretForm?: SecretForm }
  | {
      family: 'hmac-sha256';
      /** Default `x-hub-signature-256`. */
      header?: string;
      /** Text before the digest. Default `sha256=`; `''` for none. */
      prefix?: string;
      /** Default `hex`. */
      encoding?: 'hex' | 'base64';
      secretForm?: SecretForm;
      idHeader?: string;
    }
  | {
      family: 'stripe';
      /** Default `stripe-signature`. */
      header?: string;
      secretForm?: SecretForm;
      idHeader?: string;
    }
  | { family: 'unsigned'; idHeader?: string };

/** What a delivery's headers are made from. */
export interface SigningInput {
  /** The secret to sign with; without one, only the id (and timestamp) headers are sent. */
  secret: string | undefined;
  body: Uint8Array | string;
  /** The delivery id. */
  id: string;
  /** Unix seconds. */
  timestamp: number;
}

/** A resolved {@link Signing}. */
export interface DeliverySigning {
  /** The family, or `custom` for a Verifier. */
  readonly family: SigningFamily | 'custom';
  /** How a secret becomes key bytes; `undefined` when no secret is used or the Verifier's own. */
  readonly secretForm: SecretForm | undefined;
  /** A delivery's id and timestamp headers, and its signature when given a secret. */
  headers(input: SigningInput): Record<string, string> | Promise<Record<string, string>>;
}

export const SIGNING_FAMILIES: readonly SigningFamily[] = [
  'standard-webhooks',
  'svix',
  'hmac-sha256',
  'stripe',
  'unsigned',
];

/** Parameters each family takes. */
const FAMILY_OPTIONS: Record<SigningFamily, readonly string[]> = {
  'standard-webhooks': ['family', 'secretForm'],
  svix: ['family', 'secretForm'],
  'hmac-sha256': ['family', 'header', 'prefix', 'encoding', 'secretForm', 'idHeader'],
  stripe: ['family', 'header', 'secretForm', 'idHeader'],
  unsigned: ['family', 'idHeader'],
};

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const RULE =
  'a signing family ("standard-webhooks", "svix", "hmac-sha256", "stripe" or "unsigned"), ' +
  'an object { family, … }, or a Verifier that can sign';

/**
 * Reads a {@link Signing} given to `where` as option `name`; Standard Webhooks when absent. Every
 * check names the option as the caller wrote it (`signing.header`), never a preset's own name.
 */
export function resolveSigning(where: string, name: string, value: unknown): DeliverySigning {
  if (value === undefined) return familySigning('standard-webhooks', {});
  if (isVerifier(value)) {
    checkOption(where, name, value, typeof value.sign === 'function', RULE);
    return verifierSigning(value);
  }
  if (typeof value === 'string') {
    checkOption(where, name, value, (SIGNING_FAMILIES as readonly string[]).includes(value), RULE);
    return familySigning(value as SigningFamily, {});
  }
  checkOption(where, name, value, typeof value === 'object' && value !== null, RULE);
  const family = (value as { family?: unknown }).family;
  const known = typeof family === 'string' && SIGNING_FAMILIES.includes(family as never);
  checkOption(where, `${name}.family`, family, known, SIGNING_FAMILIES.map((f) => `"${f}"`).join(' or '));
  refuseUnknownOptions(value, FAMILY_OPTIONS[family as SigningFamily], `${where}'s \`${name}\``);
  const given = value as Record<string, unknown>;
  const headerName = (option: string) => {
    const header = given[option];
    const valid = header === undefined || (typeof header === 'string' && HEADER_NAME.test(header));
    checkOption(where, `${name}.${option}`, header, valid, 'an HTTP header name');
    return header as string | undefined;
  };
  const prefix = given.prefix;
  checkOption(
    where,
    `${name}.prefix`,
    prefix,
    prefix === undefined || typeof prefix === 'string',
    'a string',
  );
  return familySigning(family as SigningFamily, {
    header: headerName('header'),
    idHeader: headerName('idHeader'),
    prefix: prefix as string | undefined,
    encoding: oneOf(where, `${name}.encoding`, given.encoding, 'hex', ['hex', 'base64']),
    secretForm: given.secretForm === undefined ? undefined : secretForm(where, name, given.secretForm),
  });
}

function secretForm(where: string, name: string, value: unknown): SecretForm {
  return oneOf(where, `${name}.secretForm`, value, 'whsec-base64', SECRET_FORMS);
}

interface FamilyParameters {
  header?: string | undefined;
  idHeader?: string | undefined;
  prefix?: string | undefined;
  encoding?: 'hex' | 'base64';
  secretForm?: SecretForm | undefined;
}

function familySigning(family: SigningFamily, parameters: FamilyParameters): DeliverySigning {
  const { idHeader } = parameters;
  const idHeaders = (id: string): Record<string, string> =>
    idHeader ? { [idHeader.toLowerCase()]: id } : {};
  switch (family) {
    case 'standard-webhooks':
    case 'svix': {
      const form = parameters.secretForm ?? 'whsec-base64';
      const scheme = standardWebhooks({ secretForm: form });
      const named = family === 'svix' ? svixNames : (headers: Record<string, string>) => headers;
      return {
        family,
        secretForm: form,
        headers: ({ secret, body, id, timestamp }) =>
          secret === undefined
            ? named({ 'webhook-id': id, 'webhook-timestamp': String(timestamp) })
            : andThen(scheme.sign!({ secret, body, id, timestamp }), named),
      };
    }
    case 'hmac-sha256': {
      const form = parameters.secretForm ?? 'whsec-base64';
      const scheme = hmacSha256({
        header: parameters.header ?? 'x-hub-signature-256',
        prefix: parameters.prefix ?? 'sha256=',
        encoding: parameters.encoding ?? 'hex',
        secretForm: form,
      });
      return { family, secretForm: form, headers: signedWith(scheme, idHeaders) };
    }
    case 'stripe': {
      const form = parameters.secretForm ?? 'utf8';
      const scheme = stripeSignature({ header: parameters.header ?? 'stripe-signature', secretForm: form });
      return { family, secretForm: form, headers: signedWith(scheme, idHeaders) };
    }
    case 'unsigned':
      return { family, secretForm: undefined, headers: ({ id }) => idHeaders(id) };
  }
}

/** The id header (when asked for) and, with a secret, the scheme's signature. */
function signedWith(scheme: Verifier, idHeaders: (id: string) => Record<string, string>) {
  return ({ secret, body, id, timestamp }: SigningInput) =>
    secret === undefined
      ? idHeaders(id)
      : andThen(scheme.sign!({ secret, body, id, timestamp }), (signed) => ({ ...idHeaders(id), ...signed }));
}

function verifierSigning(verifier: Verifier): DeliverySigning {
  return {
    family: 'custom',
    secretForm: undefined,
    headers: ({ secret, body, id, timestamp }) =>
      secret === undefined ? {} : verifier.sign!({ secret, body, id, timestamp }),
  };
}

/** Standard Webhooks' headers under Svix's names: `webhook-id` becomes `svix-id`, and so on. */
function svixNames(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.replace(/^webhook-/, 'svix-'), value]),
  );
}

/** A Verifier, or any object with a `sign` method (all a signer needs). */
function isVerifier(value: unknown): value is Verifier {
  const scheme = value as Partial<Verifier> | null;
  return typeof scheme?.prepare === 'function' || typeof scheme?.sign === 'function';
}

/**
 * Whether `secret` can sign in this family: a `whsec_` secret must be base64 after the prefix in
 * the `whsec-base64` form; any non-empty string serves in the others.
 */
export function canSignWith(signing: DeliverySigning, secret: string): boolean {
  if (signing.secretForm !== 'whsec-base64') return true;
  try {
    secretBytes(secret, 'signDelivery', 'whsec-base64');
    return true;
  } catch {
    return false;
  }
}
