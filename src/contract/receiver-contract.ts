import { JobhookError } from '../common/errors.js';
import { checkOption, invalidOption, refuseUnknownOptions } from '../common/option-checks.js';
import { isRecord } from '../common/errors.js';
import {
  SCHEMES,
  checkSchemeParameters,
  schemeVerifier,
  type SchemeName,
  type SchemeParameters,
} from '../signatures/schemes.js';
import type { Verifier } from '../signatures/verifier.js';
import {
  isDotPath,
  isHeaderPath,
  payloadMapper,
  type PayloadMapper,
  type PayloadPaths,
} from './map-payload.js';

/**
 * `createReceiver({ contract })` checks a contract once, here, and turns it into a verifier (one of
 * the presets) and a payload mapping.
 */

/** A contract checked, as the receiver uses it. */
export interface ResolvedContract {
  /** The preset the signature scheme names; `undefined` for `unsigned` and `unknown`. */
  verifier: Verifier | undefined;
  mapPayload: PayloadMapper;
}

/** A contract's schemes: jobhook's presets', and the probe's two findings of none it can check. */
export const CONTRACT_SCHEMES: readonly (SchemeName | 'unsigned' | 'unknown')[] = [
  ...(Object.keys(SCHEMES) as SchemeName[]),
  'unsigned',
  'unknown',
];

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
  const named = scheme as (typeof CONTRACT_SCHEMES)[number];
  const options = named === 'unsigned' || named === 'unknown' ? [] : SCHEMES[named].parameters;
  refuseUnknownOptions(signature, ['scheme', ...options], `${WHERE}'s \`contract.signature\` (${named})`);
  if (named === 'unsigned' || named === 'unknown') {
    if (skipVerification) return undefined;
    const why =
      named === 'unsigned'
        ? 'the sender signs nothing, so nothing proves a delivery came from it: register the webhook with a `secret_key` and probe again'
        : 'the sender signs in a scheme no preset checks: the report lists what it saw; write a `verifier` for it (docs/events-and-signatures.md) in place of `contract`';
    throw new JobhookError(
      'invalid_options',
      `${WHERE}: \`contract.signature.scheme\` is "${named}": ${why} (\`dangerouslySkipVerification: true\` accepts such deliveries, for a local experiment only).`,
    );
  }
  return schemeVerifier(checkSchemeParameters(WHERE, 'contract.signature', named, signature));
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

/**
 * A sender's contract, as `jobhook probe` writes it (docs/contracts.md): how its deliveries are
 * signed and where its payloads keep what jobhook's events hold.
 */

/**
 * How a sender signs and shapes its deliveries, as `npx jobhook probe` reports it (its `contract`
 * field; `createReceiver({ contract })` also takes the whole report). Handlers see the usual
 * `JobCompletedEvent` and `JobFailedEvent` whatever the sender's shape. See docs/contracts.md.
 */
export interface ReceiverContract {
  /** The contract's format: 1 (the only one so far). */
  version?: 1;
  /**
   * The signature scheme, as one of jobhook's presets (see {@link SchemeParameters}), or `unsigned`
   * (no signature found) and `unknown` (a signature no preset checks): refused unless
   * `dangerouslySkipVerification: true`.
   */
  signature: SchemeParameters | { scheme: 'unsigned' | 'unknown' };
  /**
   * Where the sender's payload keeps each value: a dot path into the JSON body (`data.task_id`,
   * `0` for an array's first item), or `header:<name>` for a value a header carries.
   */
  payload: {
    /** The event type (or the status that stands for it), e.g. `type`, `event` or `header:x-event-type`. */
    typePath: string;
    /**
     * The sender's values at `typePath` for a completed and a failed job. Default
     * `{ completed: 'job.completed', failed: 'job.failed' }`; any other value is passed on as the
     * event type (to `onAny` handlers).
     */
    typeValues?: { completed: string; failed: string };
    /** The task id, e.g. `data.task_id`. */
    taskIdPath: string;
    /** The image URL of a completed job, e.g. `data.image_url`. */
    imageUrlPath: string;
    /**
     * The error of a failed job: `{ code, message }`, or a string (the message). Default: `error`
     * beside the task id. Absent from a delivery, the event's error is `{ code: 'unknown', … }`.
     */
    errorPath?: string;
    /**
     * The event's own id, the same on every attempt. `null` or absent: the id is
     * `<type>:<task id>`, stable across retries since one task has one outcome.
     */
    eventIdPath?: string | null;
    /** When the event happened: ISO 8601, or Unix seconds or milliseconds. `null` or absent: when received. */
    createdAtPath?: string | null;
  };
}
