/**
 * The probe's report: what it found of the signature, the payload and the retries, the contract a
 * receiver adopts, and the same as TypeScript to paste and as lines for a person.
 */
import type { ReceiverContract } from 'jobhook';
import { schemeParametersOf } from 'jobhook/extend';
import type { PayloadFinding } from './detect-payload.js';
import type { SignatureFinding } from './detect-signature.js';
import type { RetryFinding } from './listener.js';

/** What a receiver made with the contract did with the deliveries the probe captured. */
export interface ContractCheck {
  /** The completed job's delivery: `handled` when its handler got the typed event it should. */
  completed: string;
  /** The failed job's delivery, when one came. */
  failed: string | null;
  /** Whether a copy of the delivery with one byte more was refused 401; `null` when nothing is verified. */
  forgedRefused: boolean | null;
}

/** Everything `jobhook probe` prints with `--json` and writes with `--out`. */
export interface ProbeReport {
  probe: {
    /** When the probe ran (ISO 8601). */
    at: string;
    baseUrl: string | null;
    /** The URL it registered as the webhook (where the gateway delivered). */
    webhookUrl: string;
    webhookId: number;
    /** Whether the webhook was deleted at the end, and the one with a plain secret. */
    webhookDeleted: boolean;
    /** The probe's webhooks the gateway did not delete: `jobhook webhooks delete <id>` each. */
    webhooksLeft: number[];
    taskId: string;
    failedTaskId: string | null;
  };
  signature: SignatureFinding;
  payload: PayloadFinding;
  retries: RetryFinding;
  check: ContractCheck | null;
  /** What `createReceiver({ secret, contract })` adopts; `null` when a required part was not found. */
  contract: ReceiverContract | null;
  /** `createReceiver` with the contract, to paste. */
  typescript: string | null;
  /** What the probe could not learn, or guessed. */
  notes: string[];
}

/** The contract of what was found, or `undefined` (with the reason in `notes`) when a required path is missing. */
export function contractOf(
  signature: SignatureFinding,
  payload: PayloadFinding,
  notes: string[],
): ReceiverContract | undefined {
  const { typePath, typeValues, taskIdPath, imageUrlPath } = payload;
  const missing = [
    typePath === null && 'the event type',
    taskIdPath === null && 'the task id',
    imageUrlPath === null && 'the image URL',
  ].filter(Boolean);
  if (missing.length > 0) {
    notes.push(`No contract: the payload's ${missing.join(', ')} could not be found.`);
    return undefined;
  }
  return {
    version: 1,
    signature: contractSignature(signature),
    payload: {
      typePath: typePath!,
      typeValues: typeValues!,
      taskIdPath: taskIdPath!,
      imageUrlPath: imageUrlPath!,
      ...(payload.errorPath !== null && { errorPath: payload.errorPath }),
      eventIdPath: payload.eventIdPath,
      createdAtPath: payload.createdAtPath,
    },
  };
}

function contractSignature(found: SignatureFinding): ReceiverContract['signature'] {
  if (found.scheme === 'unsigned' || found.scheme === 'unknown') return { scheme: found.scheme };
  return schemeParametersOf(found.scheme, found);
}

/** `createReceiver` with `contract`, as a person pastes it: never with verification off. */
export function typescriptOf(contract: ReceiverContract, baseUrl: string | null, at: string): string {
  const { scheme } = contract.signature;
  const unverified = scheme === 'unsigned' || scheme === 'unknown';
  // JSON as a TypeScript literal: bare keys, and single quotes where no quote or escape is inside.
  const literal = JSON.stringify(contract, null, 2)
    .replace(/"([A-Za-z_$][\w$]*)":/g, '$1:')
    .replace(/"([^"'\\]*)"/g, "'$1'");
  const found = `// Found by \`jobhook probe\`${baseUrl ? ` against ${baseUrl}` : ''} on ${at.slice(0, 10)}.`;
  if (!unverified) {
    return [
      "import { createReceiver, type ReceiverContract } from 'jobhook';",
      '',
      found,
      `const contract: ReceiverContract = ${literal};`,
      '',
      'const receiver = createReceiver({',
      '  secret: process.env.WEBHOOK_SECRET!,',
      '  contract,',
      '});',
      '',
    ].join('\n');
  }
  const why =
    scheme === 'unsigned'
      ? '// The gateway signs none of its deliveries, so nothing proves one came from it:'
      : '// The deliveries are signed in a scheme jobhook has no verifier for (see `seen`):';
  return [
    "import { createReceiver, memoryJobTracker, type ReceiverContract } from 'jobhook';",
    "import { createClient } from 'jobhook/client';",
    '',
    found,
    `const contract: ReceiverContract = ${literal};`,
    '',
    why,
    "// each one is a hint, confirmed with the gateway's API (GET /api/v1/images/{task_id}) before",
    '// any handler runs, with the gateway\'s values (docs/contracts.md, "Confirm with the gateway").',
    'const jobs = memoryJobTracker(); // with several instances: redisJobTracker or postgresJobTracker',
    'const client = createClient({',
    `  baseUrl: ${baseUrl ? `'${baseUrl.replace(/[\\']/g, '\\$&')}'` : 'process.env.GATEWAY_URL!'},`,
    '  apiKey: process.env.GATEWAY_API_KEY!,',
    '  jobs, // the tasks it submits: a hint for any other task is refused without a GET',
    '});',
    'const receiver = createReceiver({',
    '  contract,',
    '  confirm: { client, jobs },',
    '});',
    '',
  ].join('\n');
}

/** The report as lines for a person: no secret, no signature value. */
export function summaryLines(report: ProbeReport): string[] {
  const { signature: s, payload: p, retries: r, check, probe } = report;
  const lines = [`Signature: ${signatureLine(s)}`];
  if (s.seen && s.seen.length > 0) {
    for (const seen of s.seen) lines.push(`  seen: ${seen.name} (${seen.length} characters): ${seen.shape}`);
  }
  const at = (path: string | null) => (path === null ? 'not found' : `"${path}"`);
  lines.push(
    `Payload: type at ${at(p.typePath)}` +
      (p.typeValues ? ` ("${p.typeValues.completed}" completed, "${p.typeValues.failed}" failed)` : '') +
      `; task id at ${at(p.taskIdPath)}; image URL at ${at(p.imageUrlPath)}; error at ${at(p.errorPath)}` +
      `; event id at ${at(p.eventIdPath)}; time at ${at(p.createdAtPath)}` +
      (p.assumed.length > 0 ? ` (guessed: ${p.assumed.join(', ')})` : ''),
  );
  lines.push(`Retries: ${retriesLine(r)}`);
  if (check) {
    const scheme = report.contract?.signature.scheme;
    const confirming = scheme === 'unsigned' || scheme === 'unknown';
    lines.push(
      `Check: a receiver made with the contract${confirming ? ", in confirm mode (no signature checked; each delivery confirmed with the gateway's API)" : ''}: completed delivery ${check.completed}` +
        (check.failed === null ? '' : `, failed delivery ${check.failed}`) +
        (check.forgedRefused === null
          ? ''
          : check.forgedRefused
            ? ', a forged copy refused 401'
            : ', a forged copy NOT refused'),
    );
  }
  if (probe.webhookDeleted) lines.push(`Webhook ${probe.webhookId} deleted.`);
  for (const id of probe.webhooksLeft)
    lines.push(`Webhook ${id} could not be deleted: run \`${deleteCommand(id)}\`.`);
  for (const note of report.notes) lines.push(`Note: ${note}`);
  return lines;
}

function signatureLine(s: SignatureFinding): string {
  const form =
    s.secretForm === 'utf8'
      ? 'the secret as text (utf8)'
      : s.secretForm === 'base64'
        ? 'the secret as base64, after whsec_ or without it (base64)'
        : 'the secret as base64 after whsec_, a plain one as text (whsec-base64)';
  switch (s.scheme) {
    case 'standard-webhooks':
      return (
        `standard-webhooks, headers ${s.headers!.id}, ${s.headers!.timestamp}, ${s.headers!.signature}; ` +
        `HMAC-SHA256 of id.timestamp.body, base64 after "v1,"; ${form}${skewText(s)}`
      );
    case 'hmac-sha256':
      return `hmac-sha256 in ${s.header}: HMAC-SHA256 of the body, ${s.encoding}${s.prefix ? ` after "${s.prefix}"` : ', no prefix'}; ${form}`;
    case 'stripe':
      return `stripe (Stripe's layout) in ${s.header}: t=<unix>,v1=<hex>, HMAC-SHA256 of timestamp.body; ${form}${skewText(s)}`;
    case 'unsigned':
      return 'unsigned: no header carries a signature';
    case 'unknown': {
      if (s.secretInHeader)
        return `unknown: the header ${s.secretInHeader} carries the secret itself, not a signature`;
      const m = s.matched;
      if (!m) return 'unknown: something looks like a signature, but no known layout matches it';
      const parts = [
        m.idHeader && `id from ${m.idHeader}`,
        m.timestampHeader && `timestamp from ${m.timestampHeader}`,
      ].filter(Boolean);
      return `unknown layout: ${m.header} holds an HMAC-SHA256 of ${m.signedContent}${parts.length ? ` (${parts.join(', ')})` : ''}, ${m.encoding}, secret form ${m.secretForm}; no preset reads it`;
    }
  }
}

function skewText(s: SignatureFinding): string {
  return s.clockSkewSeconds === null ? '' : `; its clock ${s.clockSkewSeconds} s from this one`;
}

function retriesLine(r: RetryFinding): string {
  if (!r.measured) return 'not measured (pass --retries-for SECONDS)';
  const ids =
    r.sameDeliveryId === null
      ? 'no delivery id header'
      : `delivery id (${r.deliveryIdHeader}) ${r.sameDeliveryId ? 'the same on every attempt' : 'new on each attempt'}`;
  const event = r.sameEventId === null ? '' : `, event id ${r.sameEventId ? 'the same' : 'changing'}`;
  const end = r.delivered
    ? 'then answered 200'
    : 'no attempt after that window: the sender may have given up';
  return (
    `${r.attempts} attempts; answered 500 for ${r.failedForMs / 1000} s, ${end}; delays ${r.delaysMs.join(', ') || 'none'} ms; ` +
    `${ids}${event}; last attempt ${r.lastAttemptAfterMs ?? 0} ms after the first`
  );
}

/** The command that deletes a webhook the probe left. */
const deleteCommand = (id: number) => `jobhook webhooks delete ${id}`;

/** Says which of the probe's webhooks were left, and the commands that delete them: a clause. */
export function webhooksLeftClause(ids: readonly number[]): string {
  const commands = ids.map((id) => `\`${deleteCommand(id)}\``).join(' and ');
  return ids.length === 1
    ? `its webhook ${ids[0]} could not be deleted: run ${commands}`
    : `its webhooks ${ids.join(' and ')} could not be deleted: run ${commands}`;
}
