/**
 * `createReceiver({ contract })` checks a contract (src/contract/receiver-contract.ts) once, here,
 * and turns it into a verifier (one of the presets) and a payload mapping.
 */
import { JobhookError } from '../common/errors.js';
import { checkOption, invalidOption, refuseUnknownOptions } from '../common/options.js';
import { isRecord } from '../common/is-record.js';
import { SECRET_FORMS } from '../signatures/secret.js';
import type { Verifier } from '../signatures/verifier.js';
import { contractVerifier } from './contract-verifier.js';
import { payloadMapper, type PayloadMapper, type PayloadPaths } from './map-payload.js';
import { isDotPath, isHeaderName, isHeaderPath } from './paths.js';
import type { ReceiverContract } from './receiver-contract.js';

/** A contract checked, as the receiver uses it. */
export interface ResolvedContract {
  /** The preset the signature scheme names; `undefined` for `unsigned` and `unknown`. */
  verifier: Verifier | undefined;
  mapPayload: PayloadMapper;
}

export const CONTRACT_SCHEMES = [
  'standard-webhooks',
  'hmac-sha256',
  'stripe',
  'unsigned',
  'unknown',
] as const;

const SIGNATURE_OPTIONS: Record<(typeof CONTRACT_SCHEMES)[number], readonly string[]> = {
  'standard-webhooks': ['scheme', 'secretForm'],
  'hmac-sha256': ['scheme', 'header', 'prefix', 'encoding', 'secretForm'],
  stripe: ['scheme', 'header', 'secretForm'],
  unsigned: ['scheme'],
  unknown: ['scheme'],
};

const PAYLOAD_OPTIONS = [
  'typePath',
  'typeValues',
  'taskIdPath',
  'imageUrlPath',
  'errorPath',
  'eventIdPath',
  'createdAtPath',
];

const WHERE = 'createReceiver';
const DOT_PATH = 'a dot path such as "data.task_id"';
const ANY_PATH = `${DOT_PATH}, or "header:<name>"`;

/**
 * Checks `createReceiver`'s `contract` (the contract, or a probe report that holds one in
 * `contract`) and resolves it. `skipVerification`: the receiver checks no signature, so an
 * `unsigned` or `unknown` scheme is accepted.
 */
export function resolveContract(value: unknown, skipVerification: boolean): ResolvedContract {
  const rule = 'the `contract` of a `jobhook probe` report, or the whole report';
  checkOption(WHERE, 'contract', value, isRecord(value), rule);
  const given = value as Record<string, unknown>;
  // A whole report: its `contract` is what the receiver adopts.
  const contract = isRecord(given.contract) ? given.contract : given;
  refuseUnknownOptions(contract, ['version', 'signature', 'payload'], `${WHERE}'s \`contract\``);
  const { version } = contract;
  checkOption(WHERE, 'contract.version', version, version === undefined || version === 1, '1');
  return {
    verifier: signatureOf(contract.signature, skipVerification),
    mapPayload: payloadMapper(payloadOf(contract.payload)),
  };
}

function signatureOf(value: unknown, skipVerification: boolean): Verifier | undefined {
  checkOption(WHERE, 'contract.signature', value, isRecord(value), 'an object with a `scheme`');
  const signature = value as Record<string, unknown>;
  const { scheme } = signature;
  const known = (CONTRACT_SCHEMES as readonly unknown[]).includes(scheme);
  checkOption(
    WHERE,
    'contract.signature.scheme',
    scheme,
    known,
    CONTRACT_SCHEMES.map((s) => `"${s}"`).join(', '),
  );
  const family = scheme as (typeof CONTRACT_SCHEMES)[number];
  refuseUnknownOptions(signature, SIGNATURE_OPTIONS[family], `${WHERE}'s \`contract.signature\` (${family})`);
  if (family === 'unsigned' || family === 'unknown') {
    if (skipVerification) return undefined;
    const why =
      family === 'unsigned'
        ? 'the sender signs nothing, so nothing proves a delivery came from it: register the webhook with a `secret_key` and probe again'
        : 'the sender signs in a scheme no preset checks: the report lists what it saw; write a `verifier` for it (docs/events-and-signatures.md) in place of `contract`';
    throw new JobhookError(
      'invalid_options',
      `${WHERE}: \`contract.signature.scheme\` is "${family}": ${why} (\`dangerouslySkipVerification: true\` accepts such deliveries, for a local experiment only).`,
    );
  }
  const { secretForm } = signature;
  const validForm = secretForm === undefined || (SECRET_FORMS as readonly unknown[]).includes(secretForm);
  checkOption(WHERE, 'contract.signature.secretForm', secretForm, validForm, '"whsec-base64" or "utf8"');
  const { header, prefix, encoding } = signature;
  const headerRequired = family === 'hmac-sha256';
  const validHeader = (header === undefined && !headerRequired) || isHeaderName(header);
  checkOption(WHERE, 'contract.signature.header', header, validHeader, 'an HTTP header name');
  const validPrefix = prefix === undefined || (typeof prefix === 'string' && prefix.length <= 64);
  checkOption(WHERE, 'contract.signature.prefix', prefix, validPrefix, 'a string of at most 64 characters');
  const validEncoding = encoding === undefined || encoding === 'hex' || encoding === 'base64';
  checkOption(WHERE, 'contract.signature.encoding', encoding, validEncoding, '"hex" or "base64"');
  return contractVerifier(signature as ReceiverContract['signature'] & { scheme: typeof family });
}

/** The payload part, checked: every path well formed, the required ones present. */
function payloadOf(value: unknown): PayloadPaths {
  checkOption(
    WHERE,
    'contract.payload',
    value,
    isRecord(value),
    'an object with `typePath`, `taskIdPath` and `imageUrlPath`',
  );
  const payload = value as Record<string, unknown>;
  refuseUnknownOptions(payload, PAYLOAD_OPTIONS, `${WHERE}'s \`contract.payload\``);
  const path = (name: string, rule: string, valid: (path: unknown) => boolean) => {
    const given = payload[name];
    checkOption(WHERE, `contract.payload.${name}`, given, valid(given), rule);
    return given as string;
  };
  const dotPath = (name: string) => path(name, DOT_PATH, isDotPath);
  const optional = (name: string, valid: (path: unknown) => boolean, rule: string) =>
    payload[name] === undefined || payload[name] === null ? null : path(name, `${rule}, or null`, valid);
  const taskIdPath = dotPath('taskIdPath');
  return {
    typePath: path('typePath', ANY_PATH, (given) => isDotPath(given) || isHeaderPath(given)),
    typeValues: typeValuesOf(payload.typeValues),
    taskIdPath,
    imageUrlPath: dotPath('imageUrlPath'),
    errorPath: optional('errorPath', isDotPath, DOT_PATH) ?? besideOf(taskIdPath, 'error'),
    eventIdPath: optional('eventIdPath', (given) => isDotPath(given) || isHeaderPath(given), ANY_PATH),
    createdAtPath: optional('createdAtPath', isDotPath, DOT_PATH),
  };
}

function typeValuesOf(value: unknown): { completed: string; failed: string } {
  if (value === undefined) return { completed: 'job.completed', failed: 'job.failed' };
  const rule = 'an object { completed, failed } of two different non-empty strings';
  const values = isRecord(value) ? value : {};
  const { completed, failed } = values;
  const valid =
    isRecord(value) &&
    Object.keys(value).every((key) => key === 'completed' || key === 'failed') &&
    typeof completed === 'string' &&
    typeof failed === 'string' &&
    completed !== '' &&
    failed !== '' &&
    completed !== failed;
  if (!valid) throw invalidOption(WHERE, 'contract.payload.typeValues', rule, value);
  return { completed, failed };
}

/** `name` in the object that holds `path`'s field: `data.task_id` gives `data.error`. */
function besideOf(path: string, name: string): string {
  const cut = path.lastIndexOf('.');
  return cut === -1 ? name : `${path.slice(0, cut)}.${name}`;
}
