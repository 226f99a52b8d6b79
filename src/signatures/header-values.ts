/** What signature headers carry, read the same way by every scheme: timestamps, digests, lists. */

/**
 * Entries one signature header may carry, of any version. A rotation signs with two or three
 * secrets at once; the cap leaves room for ten times that, and bounds the work a header written by
 * anyone, secret or not, can ask for.
 */
export const MAX_SIGNATURES = 32;

/**
 * A signed timestamp: 1 to 12 ASCII digits, nothing else (no sign, space, exponent or fraction,
 * which `Number` would take). Read digit by digit: a regular expression and then `Number` were two
 * passes, on every delivery.
 */
export function unixSeconds(text: string): number | undefined {
  if (text.length === 0 || text.length > 12) return undefined;
  let seconds = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    seconds = seconds * 10 + digit;
  }
  return seconds;
}

/** Whether `seconds` lies further than the tolerance from `now` (ms), in either direction. */
export function outsideTolerance(now: number, seconds: number, toleranceSeconds: number): boolean {
  return Math.abs(now / 1000 - seconds) > toleranceSeconds;
}

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

/** A 32-byte digest written in hex, of either case. */
export function isHexDigest(text: string): boolean {
  return HEX_DIGEST.test(text);
}
