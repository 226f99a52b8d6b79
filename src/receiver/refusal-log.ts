import type { SafeLogger } from '../common/logging.js';
import type { HeaderReader } from '../wire/headers.js';
import type { RefusalCode } from '../signatures/verifier.js';
import type { AlarmWitness } from './alarm-witness.js';

/** Lines about refused deliveries written in one minute, at most; the rest are counted. */
export const REFUSAL_LINES_PER_MINUTE = 10;
/** Signature refusals in a row, with no delivery verified in between, that raise the alarm. */
export const ALARM_AFTER_REFUSALS = 10;
/** While refusals go on, the alarm is raised again at most this often. */
export const ALARM_EVERY_MS = 5 * 60_000;
/** Tenants whose runs of refusals are counted at once, at most: the run refused longest ago is forgotten first. */
export const MAX_TENANT_RUNS = 1000;
const MINUTE = 60_000;

/** What the alarm tells an observer: deliveries are arriving, and none verifies. */
export interface SignatureAlarm {
  /** Deliveries refused for their signature in a row, since the last one that verified. */
  refusedInARow: number;
  /** When the first of them came (ms since the epoch). */
  since: number;
  /** Whether the gateway bears it out: the webhook `register()` made counts failed deliveries, the last a 401. */
  confirmed: boolean;
  /** The tenant whose secrets refused them (with a `secret` function), if known. */
  tenant?: string;
  /** A signature header of another family the deliveries carried (`stripe-signature`), if any. */
  foreignHeader?: string;
}

/** One refusal: its code, the tenant whose secrets were tried, another family's signature header seen. */
export interface Refusal {
  code?: RefusalCode | undefined;
  tenant?: string | undefined;
  foreignHeader?: string | undefined;
}

/** What a receiver tells its refusal log. */
export interface RefusalLog {
  /** A delivery was refused: `line` is written at warn, unless this minute's lines are spent. */
  refused(line: string, refusal?: Refusal): void;
  /** A delivery verified (for `tenant`): that tenant's run of refusals is over. */
  verified(tenant?: string): void;
}

interface Run {
  inARow: number;
  since: number;
  alarmedAt: number;
  foreignHeader: string | undefined;
}

/**
 * Refused deliveries, visible and bounded: one line each, at most {@link REFUSAL_LINES_PER_MINUTE}
 * a minute, then a count. And the silent failure users fear most: {@link ALARM_AFTER_REFUSALS}
 * refusals in a row for one tenant, of signatures that match no secret or of another family's
 * headers, raise the alarm (again at most every {@link ALARM_EVERY_MS}): at error when the
 * `witness` (the gateway's counters) confirms it, else at warn. No timer: each step is a delivery's.
 */
export function refusalLog(
  logger: SafeLogger,
  now: () => number,
  alarm: ((signatureAlarm: SignatureAlarm) => void) | undefined,
  witness?: AlarmWitness,
  track?: (work: Promise<unknown>) => void,
): RefusalLog {
  let windowStart = -Infinity;
  let written = 0;
  let skipped = 0;
  const runs = new Map<string, Run>();

  function raise(run: Run, tenant: string | undefined, confirmed: boolean): void {
    const raised: SignatureAlarm = { refusedInARow: run.inARow, since: run.since, confirmed };
    if (tenant !== undefined) raised.tenant = tenant;
    if (run.foreignHeader !== undefined) raised.foreignHeader = run.foreignHeader;
    const whose = tenant === undefined ? '' : ` for the tenant ${JSON.stringify(tenant)}`;
    const cause =
      run.foreignHeader === undefined
        ? `their signature matches no secret${whose}`
        : `they carry ${run.foreignHeader}, the signature header of another family than the receiver checks${whose}`;
    const meaning =
      run.foreignHeader === undefined
        ? "the receiver's secret probably differs from the secret_key the webhook was registered with."
        : 'the gateway probably signs another way: run `jobhook probe` to learn how, and give createReceiver its contract.';
    const proof = confirmed
      ? 'The gateway confirms it: its webhook counts these deliveries as failed.'
      : "Unconfirmed: the gateway's webhook counters do not show it (anyone can send deliveries that fail; register() lets the receiver ask the gateway).";
    const line =
      `jobhook: the last ${run.inARow} deliveries were all refused because ${cause}, ` +
      `and none verified since ${new Date(run.since).toISOString()}. ${proof} If they are the gateway's: ${meaning}`;
    if (confirmed) logger.error(line);
    else logger.warn(line);
    alarm?.(raised);
  }

  return {
    refused(line, refusal = {}) {
      const at = now();
      if (at - windowStart >= MINUTE) {
        if (skipped > 0) {
          logger.warn(
            `jobhook: ${skipped} more refused deliveries in the minute before were not logged one by one.`,
          );
        }
        windowStart = at;
        written = 0;
        skipped = 0;
      }
      if (written < REFUSAL_LINES_PER_MINUTE) {
        written++;
        logger.warn(line);
      } else skipped++;
      if (refusal.code !== 'no_match' && refusal.foreignHeader === undefined) return;
      const { tenant } = refusal;
      const key = tenant ?? '';
      let run = runs.get(key);
      // Kept in the order of their latest refusal: the run forgotten to make room is the one
      // refused longest ago, never the run of a tenant still refused (a stale secret) however old.
      if (run) runs.delete(key);
      else {
        if (runs.size >= MAX_TENANT_RUNS) runs.delete(runs.keys().next().value!);
        run = { inARow: 0, since: at, alarmedAt: -Infinity, foreignHeader: undefined };
      }
      runs.set(key, run);
      run.inARow++;
      run.foreignHeader = refusal.foreignHeader ?? run.foreignHeader;
      if (run.inARow < ALARM_AFTER_REFUSALS || at - run.alarmedAt < ALARM_EVERY_MS) return;
      run.alarmedAt = at;
      if (!witness?.watching()) return raise(run, tenant, false);
      const asked = witness.corroborates().then(
        (confirmed) => raise(run, tenant, confirmed),
        () => raise(run, tenant, false),
      );
      track?.(asked);
    },
    verified(tenant) {
      runs.delete(tenant ?? '');
    },
  };
}

// Each family's signature headers, whole: a delivery lacking the receiver's own but carrying one was signed another way.
const FAMILIES: readonly (readonly string[])[] = [
  ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
  ['svix-id', 'svix-timestamp', 'svix-signature'],
  ['stripe-signature'],
  ['x-hub-signature-256'],
  ['x-signature'],
];

/** The signature header of another family `headers` carries whole, if any. */
export function foreignSignatureHeader(headers: HeaderReader | undefined): string | undefined {
  if (!headers) return undefined;
  const family = FAMILIES.find((names) => names.every((name) => headers.get(name) !== undefined));
  return family?.[family.length - 1];
}
