import { JobhookError } from '../common/errors.js';
import { isRecord } from '../common/values.js';
import { positiveInteger, refuseUnknownOptions, wholeNumber } from '../common/option-checks.js';
import type { InboxRetry } from './inbox.js';

/** The options every inbox takes, whatever it stores in. */
export interface InboxOptions {
  /** How long a settled delivery (handled, failed, refused) is kept, in ms. Default 7 days. */
  retainMs?: number;
  /** The most bytes of settled deliveries' bodies kept; the oldest go first past it. Default 1 GiB. */
  maxBytes?: number;
  /** The bounds of the refused deliveries kept, oldest out first. Default 10,000 and 64 MiB. */
  quarantine?: { maxCount?: number; maxBytes?: number };
  /** How long one process holds a delivery it runs before another may, in ms. Default 30,000. */
  leaseMs?: number;
  /** Runs of a failing delivery in all, and the wait before each retry. Default 10, from 1 s doubling to 5 min. */
  retry?: { attempts?: number; firstMs?: number; maxMs?: number };
}

/** {@link InboxOptions}, resolved. */
export interface InboxLimits {
  retainMs: number;
  maxBytes: number;
  quarantineCount: number;
  quarantineBytes: number;
  leaseMs: number;
  retry: InboxRetry;
}

const DAY = 24 * 60 * 60 * 1000;
const MIB = 1024 * 1024;

/** The quarantine's defaults: a flood of forged requests fills at most 64 MiB, then pushes out its own. */
export const QUARANTINE_DEFAULTS = { maxCount: 10_000, maxBytes: 64 * MIB };

export function inboxLimits(where: string, options: InboxOptions): InboxLimits {
  const quarantine: unknown = options.quarantine;
  const retry: unknown = options.retry;
  if (quarantine !== undefined && !isRecord(quarantine)) throw badObject(where, 'quarantine');
  if (retry !== undefined && !isRecord(retry)) throw badObject(where, 'retry');
  refuseUnknownOptions(quarantine, ['maxCount', 'maxBytes'], `${where}'s quarantine`);
  refuseUnknownOptions(retry, ['attempts', 'firstMs', 'maxMs'], `${where}'s retry`);
  const q = (quarantine ?? {}) as NonNullable<InboxOptions['quarantine']>;
  const r = (retry ?? {}) as NonNullable<InboxOptions['retry']>;
  const firstMs = wholeNumber(where, 'retry.firstMs', r.firstMs, 1000, { min: 0, unit: 'ms' });
  return {
    retainMs: positiveInteger(where, 'retainMs', options.retainMs, 7 * DAY, 'ms'),
    maxBytes: positiveInteger(where, 'maxBytes', options.maxBytes, 1024 * MIB, 'bytes'),
    quarantineCount: positiveInteger(where, 'quarantine.maxCount', q.maxCount, QUARANTINE_DEFAULTS.maxCount),
    quarantineBytes: positiveInteger(
      where,
      'quarantine.maxBytes',
      q.maxBytes,
      QUARANTINE_DEFAULTS.maxBytes,
      'bytes',
    ),
    leaseMs: positiveInteger(where, 'leaseMs', options.leaseMs, 30_000, 'ms'),
    retry: {
      attempts: positiveInteger(where, 'retry.attempts', r.attempts, 10),
      backoff: {
        firstMs,
        maxMs: wholeNumber(where, 'retry.maxMs', r.maxMs, Math.max(firstMs, 300_000), {
          min: firstMs,
          unit: 'ms',
        }),
        jitter: 0.2,
      },
    },
  };
}

function badObject(where: string, name: string) {
  return new JobhookError('invalid_options', `${where}: \`${name}\` must be an object.`);
}
