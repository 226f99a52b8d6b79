// The families of signature signDelivery and the simulator sign in, each signed by the verifier
// preset that checks it, so that a family has one implementation.
import { checkOption, oneOf, refuseUnknownOptions } from '../common/option-checks.js';
import { hmacSha256 } from '../signatures/hmac-sha256.js';
import { SECRET_FORMS, secretBytes, type SecretForm } from '../signatures/secret.js';
import { standardWebhooks } from '../signatures/standard-webhooks.js';
import { stripeSignature } from '../signatures/stripe-signature.js';
import type { Verifier } from '../signatures/verifier.js';

/** A family of signature schemes, named as docs/events-and-signatures.md describes each. */
export type SigningFamily = 'standard-webhooks' | 'svix' | 'hmac-sha256' | 'stripe' | 'unsigned';

/**
 * How deliveries are signed: a family by name, a family with parameters, or a {@link Verifier} that
 * can sign. `standard-webhooks` (`svix`: the same under Svix's names) and `hmac-sha256` (GitHub's
 * `x-hub-signature-256: sha256=<hex>` by default) read secrets in the `whsec-base64` form, `stripe`
 * in `utf8`; `unsigned` sends no signature. `secretForm` replaces the form; `idHeader` also sends
 * the delivery id in that header (docs/gateway-simulator.md, "Signing").
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

/** What a delivery's headers are made from; without a secret, only its id (and timestamp) headers. */
export interface SigningInput {
  secret: string | undefined;
  body: Uint8Array | string;
  id: string;
  /** Unix seconds. */
  timestamp: number;
}

/** A resolved {@link Signing}. */
export interface DeliverySigning {
  readonly family: SigningFamily | 'custom';
  /** How a secret becomes key bytes; undefined when no secret is used, or for a Verifier. */
  readonly secretForm: SecretForm | undefined;
  /** The scheme that signs: synchronous on Node, a promise with crypto.subtle. None for `unsigned`. */
  readonly scheme: Verifier | undefined;
  /** A delivery's headers, given the scheme's signature (undefined without a secret). */
  headers(
    delivery: { id: string; timestamp: number },
    signature: Record<string, string> | undefined,
  ): Record<string, string>;
}

/** A delivery's headers, awaiting the scheme's signature: the simulator and the Web build sign so. */
export async function signedHeaders(
  signing: DeliverySigning,
  input: SigningInput,
): Promise<Record<string, string>> {
  const { secret, body, id, timestamp } = input;
  const signature =
    secret === undefined || !signing.scheme
      ? undefined
      : await signing.scheme.sign!({ secret, body, id, timestamp });
  return signing.headers(input, signature);
}

/** Every family a delivery can be signed in, by name. */
export const SIGNING_FAMILIES: readonly SigningFamily[] = [
  'standard-webhooks',
  'svix',
  'hmac-sha256',
  'stripe',
  'unsigned',
];

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

/** Reads a {@link Signing} given to `where` as `name` (Standard Webhooks when absent). */
export function resolveSigning(where: string, name: string, value: unknown): DeliverySigning {
  if (value === undefined) return familySigning('standard-webhooks', {});
  if (isVerifier(value)) {
    checkOption(where, name, value, typeof value.sign === 'function', RULE);
    return {
      family: 'custom',
      secretForm: undefined,
      scheme: value,
      headers: (_, signature) => signature ?? {},
    };
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
    secretForm:
      given.secretForm === undefined
        ? undefined
        : oneOf(where, `${name}.secretForm`, given.secretForm, 'whsec-base64', SECRET_FORMS),
  });
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
  // The id header (when asked for), then the signature.
  const withIdHeader: DeliverySigning['headers'] = ({ id }, signature) => ({
    ...idHeaders(id),
    ...signature,
  });
  switch (family) {
    case 'standard-webhooks':
    case 'svix': {
      const form = parameters.secretForm ?? 'whsec-base64';
      const named = family === 'svix' ? svixNames : (headers: Record<string, string>) => headers;
      return {
        family,
        secretForm: form,
        scheme: standardWebhooks({ secretForm: form }),
        headers: ({ id, timestamp }, signature) =>
          named(signature ?? { 'webhook-id': id, 'webhook-timestamp': String(timestamp) }),
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
      return { family, secretForm: form, scheme, headers: withIdHeader };
    }
    case 'stripe': {
      const form = parameters.secretForm ?? 'utf8';
      const scheme = stripeSignature({ header: parameters.header ?? 'stripe-signature', secretForm: form });
      return { family, secretForm: form, scheme, headers: withIdHeader };
    }
    case 'unsigned':
      return { family, secretForm: undefined, scheme: undefined, headers: withIdHeader };
  }
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

/** Whether `secret` can sign in this family: in the `whsec-base64` form, `whsec_` must prefix base64. */
export function canSignWith(signing: DeliverySigning, secret: string): boolean {
  if (signing.secretForm !== 'whsec-base64') return true;
  try {
    secretBytes(secret, 'signDelivery', 'whsec-base64');
    return true;
  } catch {
    return false;
  }
}
