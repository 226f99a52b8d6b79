// The schemes signDelivery and the simulator sign in: jobhook's presets (src/signatures/schemes.ts,
// the one description of each), Standard Webhooks under Svix's names, and none.
import { checkOption, refuseUnknownOptions } from '../common/option-checks.js';
import { isHeaderName } from '../wire/headers.js';
import {
  SCHEMES,
  checkSchemeParameters,
  isSchemeName,
  schemeVerifier,
  type SchemeName,
  type SchemeParameters,
} from '../signatures/schemes.js';
import { secretBytes, type SecretForm } from '../signatures/secret.js';
import type { Verifier } from '../signatures/verifier.js';

/** A scheme deliveries are signed in, named as docs/events-and-signatures.md describes each. */
export type SigningScheme = SchemeName | 'svix' | 'unsigned';

/** A scheme named by `scheme`, or by `family`, its old name. */
type NamedScheme<S extends SigningScheme> =
  | { scheme: S; family?: undefined }
  | {
      /** @deprecated Name it `scheme` (the same values): `family` goes in the next version. */
      family: S;
      scheme?: undefined;
    };

/**
 * How deliveries are signed: a scheme by name, a scheme with parameters, or a {@link Verifier} that
 * can sign. `standard-webhooks` (`svix`: the same under Svix's names) and `hmac-sha256` (GitHub's
 * `x-hub-signature-256: sha256=<hex>` by default) read secrets in the `whsec-base64` form, `stripe`
 * in `utf8`; `unsigned` sends no signature. `secretForm` replaces the form; `idHeader` also sends
 * the delivery id in that header (docs/gateway-simulator.md, "Signing").
 */
export type Signing =
  | SigningScheme
  | (NamedScheme<'standard-webhooks' | 'svix'> & { secretForm?: SecretForm })
  | (NamedScheme<'hmac-sha256'> & {
      /** Default `x-hub-signature-256`. */
      header?: string;
      /** Text before the digest. Default `sha256=`; `''` for none. */
      prefix?: string;
      /** Default `hex`. */
      encoding?: 'hex' | 'base64';
      secretForm?: SecretForm;
      idHeader?: string;
    })
  | (NamedScheme<'stripe'> & {
      /** Default `stripe-signature`. */
      header?: string;
      secretForm?: SecretForm;
      idHeader?: string;
    })
  | (NamedScheme<'unsigned'> & { idHeader?: string });

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
  readonly scheme: SigningScheme | 'custom';
  /** How a secret becomes key bytes; undefined when no secret is used, or for a Verifier. */
  readonly secretForm: SecretForm | undefined;
  /** The verifier that signs: synchronous on Node, a promise with crypto.subtle. None for `unsigned`. */
  readonly verifier: Verifier | undefined;
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
    secret === undefined || !signing.verifier
      ? undefined
      : await signing.verifier.sign!({ secret, body, id, timestamp });
  return signing.headers(input, signature);
}

/** Every scheme a delivery can be signed in, by name. */
export const SIGNING_SCHEMES: readonly SigningScheme[] = [
  'standard-webhooks',
  'svix',
  'hmac-sha256',
  'stripe',
  'unsigned',
];

/** The parameters each scheme takes besides its name: its preset's, and the id header beside them. */
function signingOptions(scheme: SigningScheme): readonly string[] {
  if (scheme === 'unsigned') return ['idHeader'];
  if (scheme === 'svix' || scheme === 'standard-webhooks') return SCHEMES['standard-webhooks'].parameters;
  return [...SCHEMES[scheme].parameters, 'idHeader'];
}

/** The simulator's own defaults where a preset has none: GitHub's header and prefix. */
const HMAC_DEFAULTS = { header: 'x-hub-signature-256', prefix: 'sha256=' };

const RULE =
  `a signing scheme (${SIGNING_SCHEMES.map((scheme) => `"${scheme}"`).join(', ')}), ` +
  'an object { scheme, … }, or a Verifier that can sign';

/** Reads a {@link Signing} given to `where` as `name` (Standard Webhooks when absent). */
export function resolveSigning(where: string, name: string, value: unknown): DeliverySigning {
  if (value === undefined)
    return schemeSigning({ scheme: 'standard-webhooks' }, 'standard-webhooks', undefined);
  if (isVerifier(value)) {
    checkOption(where, name, value, typeof value.sign === 'function', RULE);
    return {
      scheme: 'custom',
      secretForm: undefined,
      verifier: value,
      headers: (_, signature) => signature ?? {},
    };
  }
  const known = (scheme: unknown): scheme is SigningScheme => SIGNING_SCHEMES.includes(scheme as never);
  if (typeof value === 'string') {
    checkOption(where, name, value, known(value), RULE);
    return resolveSigning(where, name, { scheme: value });
  }
  checkOption(where, name, value, typeof value === 'object' && value !== null, RULE);
  const given = value as Record<string, unknown>;
  // `family`: the old name of `scheme`, read for one more version.
  const key = given.scheme === undefined && given.family !== undefined ? 'family' : 'scheme';
  const scheme = given[key];
  checkOption(
    where,
    `${name}.${key}`,
    scheme,
    known(scheme),
    SIGNING_SCHEMES.map((s) => `"${s}"`).join(' or '),
  );
  refuseUnknownOptions(value, [key, ...signingOptions(scheme as SigningScheme)], `${where}'s \`${name}\``);
  const { idHeader } = given;
  const validIdHeader = idHeader === undefined || isHeaderName(idHeader);
  checkOption(where, `${name}.idHeader`, idHeader, validIdHeader, 'an HTTP header name');
  const preset = scheme === 'svix' ? 'standard-webhooks' : (scheme as SigningScheme);
  if (!isSchemeName(preset)) return schemeSigning(undefined, 'unsigned', idHeader as string | undefined);
  const parameters = { ...(preset === 'hmac-sha256' && HMAC_DEFAULTS), ...definedOf(given) };
  return schemeSigning(
    checkSchemeParameters(where, name, preset, parameters),
    scheme as SigningScheme,
    idHeader as string | undefined,
  );
}

function definedOf(given: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
}

/** How a scheme's deliveries are signed: its preset with `parameters` (none for `unsigned`). */
function schemeSigning(
  parameters: SchemeParameters | undefined,
  scheme: SigningScheme,
  idHeader: string | undefined,
): DeliverySigning {
  const idHeaders = (id: string): Record<string, string> =>
    idHeader ? { [idHeader.toLowerCase()]: id } : {};
  const withIdHeader: DeliverySigning['headers'] = ({ id }, signature) => ({
    ...idHeaders(id),
    ...signature,
  });
  if (parameters === undefined) {
    return { scheme, secretForm: undefined, verifier: undefined, headers: withIdHeader };
  }
  const secretForm = parameters.secretForm ?? SCHEMES[parameters.scheme].secretForm;
  const verifier = schemeVerifier({ ...parameters, secretForm });
  if (parameters.scheme !== 'standard-webhooks')
    return { scheme, secretForm, verifier, headers: withIdHeader };
  const named = scheme === 'svix' ? svixNames : (headers: Record<string, string>) => headers;
  return {
    scheme,
    secretForm,
    verifier,
    headers: ({ id, timestamp }, signature) =>
      named(signature ?? { 'webhook-id': id, 'webhook-timestamp': String(timestamp) }),
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

/** Whether `secret` can sign in this scheme: base64 where its secret form asks for base64. */
export function canSignWith(signing: DeliverySigning, secret: string): boolean {
  if (signing.secretForm === undefined || signing.secretForm === 'utf8') return true;
  try {
    secretBytes(secret, 'signDelivery', signing.secretForm);
    return true;
  } catch {
    return false;
  }
}
