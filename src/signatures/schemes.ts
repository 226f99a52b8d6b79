// The one description of each scheme jobhook has a preset for (its parameters, their check, the
// verifier they make, which signs too), read by a contract, the testing kit's signer and the probe.
import { checkOption, oneOf } from '../common/option-checks.js';
import { isHeaderName } from '../wire/headers.js';
import { hmacSha256 } from './hmac-sha256.js';
import { SECRET_FORMS, type SecretForm } from './secret.js';
import { standardWebhooks } from './standard-webhooks.js';
import { stripeSignature } from './stripe-signature.js';
import type { Verifier } from './verifier.js';

/**
 * A signature scheme with its parameters, each the option of the same name of its preset:
 * - `standard-webhooks`: `standardWebhooks({ secretForm })`, Svix's `svix-*` names included;
 * - `hmac-sha256`: the body's HMAC in one header, `hmacSha256({ header, prefix, encoding, secretForm })`;
 * - `stripe`: Stripe's `t=<unix>,v1=<hex>` over `${t}.${body}`, `stripeSignature({ header, secretForm })`.
 */
export type SchemeParameters =
  | { scheme: 'standard-webhooks'; secretForm?: SecretForm }
  | {
      scheme: 'hmac-sha256';
      /** The header that carries the digest. */
      header: string;
      /** Text before the digest, such as `sha256=`. Default none. */
      prefix?: string;
      /** Default `hex`. */
      encoding?: 'hex' | 'base64';
      secretForm?: SecretForm;
    }
  | { scheme: 'stripe'; header?: string; secretForm?: SecretForm };

/** The name of a scheme jobhook has a preset for. */
export type SchemeName = SchemeParameters['scheme'];

/** A scheme's parameters besides `scheme`, and how its preset reads a secret given no `secretForm`. */
interface SchemeDescription {
  readonly parameters: readonly string[];
  readonly secretForm: SecretForm;
}

/** Each scheme jobhook has a preset for. */
export const SCHEMES: { readonly [S in SchemeName]: SchemeDescription } = {
  'standard-webhooks': { parameters: ['secretForm'], secretForm: 'whsec-base64' },
  'hmac-sha256': { parameters: ['header', 'prefix', 'encoding', 'secretForm'], secretForm: 'whsec-base64' },
  stripe: { parameters: ['header', 'secretForm'], secretForm: 'utf8' },
};

/** Whether `name` is a scheme jobhook has a preset for. */
export function isSchemeName(name: unknown): name is SchemeName {
  return typeof name === 'string' && Object.hasOwn(SCHEMES, name);
}

/**
 * Checks the parameters of `scheme` given to `where` as `name` (`contract.signature`, say), whose
 * unknown keys the caller has refused: each error names the parameter and its rule.
 */
export function checkSchemeParameters(
  where: string,
  name: string,
  scheme: SchemeName,
  given: Readonly<Record<string, unknown>>,
): SchemeParameters {
  const { header, prefix, encoding, secretForm } = given;
  const validHeader = (header === undefined && scheme !== 'hmac-sha256') || isHeaderName(header);
  checkOption(where, `${name}.header`, header, validHeader, 'an HTTP header name');
  const validPrefix = prefix === undefined || (typeof prefix === 'string' && prefix.length <= 64);
  checkOption(where, `${name}.prefix`, prefix, validPrefix, 'a string of at most 64 characters');
  const parameters = {
    scheme,
    ...(header !== undefined && { header }),
    ...(prefix !== undefined && { prefix }),
    ...(encoding !== undefined && {
      encoding: oneOf(where, `${name}.encoding`, encoding, 'hex', ['hex', 'base64']),
    }),
    ...(secretForm !== undefined && {
      secretForm: oneOf(where, `${name}.secretForm`, secretForm, 'whsec-base64', SECRET_FORMS),
    }),
  };
  return parameters as SchemeParameters;
}

/** The preset that checks, and signs, `parameters`: the presets check their own options too. */
export function schemeVerifier(parameters: SchemeParameters): Verifier {
  const secretForm = parameters.secretForm === undefined ? {} : { secretForm: parameters.secretForm };
  switch (parameters.scheme) {
    case 'standard-webhooks':
      return standardWebhooks(secretForm);
    case 'hmac-sha256':
      return hmacSha256({
        header: parameters.header,
        ...(parameters.prefix !== undefined && { prefix: parameters.prefix }),
        ...(parameters.encoding !== undefined && { encoding: parameters.encoding }),
        ...secretForm,
      });
    case 'stripe':
      return stripeSignature({
        ...(parameters.header !== undefined && { header: parameters.header }),
        ...secretForm,
      });
  }
}

/** The parameters of `scheme` read from `found` (a finding that holds them among other fields). */
export function schemeParametersOf(scheme: SchemeName, finding: object): SchemeParameters {
  const found = finding as Readonly<Record<string, unknown>>;
  const picked = SCHEMES[scheme].parameters
    .filter((key) => found[key] !== undefined && found[key] !== null)
    .map((key) => [key, found[key]] as const);
  return { scheme, ...Object.fromEntries(picked) } as SchemeParameters;
}
