import type { SafeLogger } from '../common/logging.js';
import type { RefusalCode } from '../signatures/verifier.js';

/** Lines about refused deliveries written in one minute, at most; the rest are counted. */
export const REFUSAL_LINES_PER_MINUTE = 10;
/** Signature refusals in a row, with no delivery verified in between, that raise the alarm. */
export const ALARM_AFTER_REFUSALS = 10;
/** While refusals go on, the alarm is raised again at most this often. */
export const ALARM_EVERY_MS = 5 * 60_000;
const MINUTE = 60_000;

/** What the alarm tells an observer: deliveries are arriving, and none verifies. */
export interface SignatureAlarm {
  /** Deliveries refused for their signature in a row, since the last one that verified. */
  refusedInARow: number;
  /** When the first of them came (ms since the epoch). */
  since: number;
}

/** What a receiver tells its refusal log. */
export interface RefusalLog {
  /**
   * A delivery was refused: `line` is written at warn, unless this minute's lines are spent.
   * `signature`: the refusal code when the signature itself did not match.
   */
  refused(line: string, signature?: RefusalCode): void;
  /** A delivery verified: a run of refusals is over. */
  verified(): void;
}

/**
 * Refused deliveries, visible and bounded: one line each, at most
 * {@link REFUSAL_LINES_PER_MINUTE} a minute (a flood of bad requests prints a bounded number, and
 * how many were left out). And the silent failure users fear most: when
 * {@link ALARM_AFTER_REFUSALS} deliveries in a row carried well-formed signatures that match no
 * secret, the secret the receiver has is probably not the one the webhook was registered with; that
 * is said at error level, and to `alarm`, then at most every {@link ALARM_EVERY_MS} while it lasts.
 * No timer: each step happens on a delivery.
 */
export function refusalLog(
  logger: SafeLogger,
  now: () => number,
  alarm: ((signatureAlarm: SignatureAlarm) => void) | undefined,
): RefusalLog {
  let windowStart = -Infinity;
  let written = 0;
  let skipped = 0;
  let inARow = 0;
  let since = 0;
  let alarmedAt = -Infinity;

  return {
    refused(line, signature) {
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
      if (signature !== 'no_match') return;
      if (inARow++ === 0) since = at;
      if (inARow < ALARM_AFTER_REFUSALS || at - alarmedAt < ALARM_EVERY_MS) return;
      alarmedAt = at;
      logger.error(
        `jobhook: the last ${inARow} deliveries were all refused because their signature matches no secret, ` +
          `and none verified since ${new Date(since).toISOString()}. Deliveries are arriving but none verifies: ` +
          "the receiver's secret probably differs from the secret_key the webhook was registered with.",
      );
      alarm?.({ refusedInARow: inARow, since });
    },
    verified() {
      inARow = 0;
      alarmedAt = -Infinity;
    },
  };
}
